"""A state's `invoke:` entries in Graphviz DOT: boxes (`shape=component`), each linked to its
child chart's page when it has one (`statekit docs`)."""

from __future__ import annotations

from statekit.diagrams import palette
from statekit.diagrams.dot_text import html, quoted
from statekit.diagrams.model import Diagram, DState


def invocation_boxes(d: Diagram, state: DState, indent: str, beside: bool) -> list[str]:
    """The DOT lines of the state's invocations as boxes, each linked to its child chart's
    page when it has one; `beside` a simple state, joined to it by a dotted line."""
    out: list[str] = []
    for k, inv in enumerate(d.invocations_of(state.id)):
        box = f"v{state.id}_{k}"
        child = inv.text().split(" → ", 1)[1]  # the chart, and its version when pinned
        below = "" if child == inv.id else f'<BR/><FONT POINT-SIZE="9">chart {html(child)}</FONT>'
        label = f'<<FONT POINT-SIZE="9">invoke </FONT><B>{html(inv.id)}</B>{below}>'

        link = ""
        if inv.href is not None:
            link = f', URL={quoted(inv.href)}, target="_top", fontcolor="{palette.TIMER}"'
        tooltip = f"{state.path or d.name} invokes chart {inv.chart}"
        out.append(
            f'{indent}{box} [shape=component, style="filled", fillcolor="#f5f7fa", '
            f"color={quoted(palette.MUTED)}, label={label}, "
            f"tooltip={quoted(tooltip)}{link}];"
        )
        if beside:
            out.append(
                f"{indent}s{state.id} -> {box} [style=dotted, arrowhead=none, "
                f'color="{palette.MUTED}", minlen=1];'
            )
            out.append(f"{indent}{{rank=same; s{state.id}; {box};}}")
    return out

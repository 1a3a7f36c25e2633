"""The invocations a diagram draws: each invoke as a box in its state, linked to the child.

`diagram_invocations(chart)` reads a chart's `invoke:` entries into
`DInvocation`s for the diagram model; `statekit docs` gives each the address
of its child chart's page (`statekit.diagrams.site`; a lone diagram has
none). The renderers write them: DOT as a box beside (or inside) its state
with the address as `URL` (a link in the SVG), Mermaid as a line in the
state's box or note, Markdown as a table of links.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.ir import CompiledChart


@dataclass(frozen=True, slots=True)
class DInvocation:
    """One `invoke:` entry: the invoking state's id, the invoke id, the child chart's name
    and pinned version (None: the newest), and the address of the child's page (None:
    not known). An invoke that chooses its chart (`chart: {by, cases}`) is one
    `DInvocation` per case, `case` its value (None: a fixed chart)."""

    state: int
    id: str
    chart: str
    version: int | None
    href: str | None = None
    case: str | int | bool | None = None
    forward: bool = False

    def text(self) -> str:
        """`invoke payment → payment` (`… → payment v2` with a pinned version, `… →
        card_payment if 'card'` for a case of a chosen chart, `… (forward)` when the child
        gets every event the parent processes)."""
        pinned = f" v{self.version}" if self.version is not None else ""
        case = f" if {self.case!r}" if self.case is not None else ""
        forward = " (forward)" if self.forward else ""
        return f"invoke {self.id} → {self.chart}{pinned}{case}{forward}"


def diagram_invocations(chart: CompiledChart) -> tuple[DInvocation, ...]:
    """The chart's invocations in document order (a chosen chart: each case in order)."""
    found: list[DInvocation] = []
    for i in chart.invocations:
        if i.choice is None:
            found.append(DInvocation(i.state, i.id, i.chart, i.version, forward=i.forward))
        else:
            found += (
                DInvocation(i.state, i.id, c.chart, None, case=c.value, forward=i.forward)
                for c in i.choice.cases
            )
    return tuple(found)

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
    not known)."""

    state: int
    id: str
    chart: str
    version: int | None
    href: str | None = None
    forward: bool = False

    def text(self) -> str:
        """`invoke payment → payment` (`… → payment v2` with a pinned version, `… (forward)`
        when the child gets every event the parent processes)."""
        pinned = f" v{self.version}" if self.version is not None else ""
        forward = " (forward)" if self.forward else ""
        return f"invoke {self.id} → {self.chart}{pinned}{forward}"


def diagram_invocations(chart: CompiledChart) -> tuple[DInvocation, ...]:
    """The chart's invocations in document order."""
    return tuple(
        DInvocation(i.state, i.id, i.chart, i.version, forward=i.forward) for i in chart.invocations
    )

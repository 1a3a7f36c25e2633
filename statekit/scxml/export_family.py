"""What an exported document needs of the charts a chart invokes, and where a `send`
with `to:` goes (SCXML out, `statekit.scxml.export_document` writes the elements).

`invoke:` becomes `<invoke id>` with the child chart's own document inline in
`<content>` and a `<param>` per input field, so the export is given the chart set
(`ChartSet`: the charts by name, each version). `send: {to: parent}` becomes
`target="#_parent"`, `to: <invoke id>` becomes `target="#_<invoke id>"`; a `send` to
another instance by its ID has no SCXML target psm can reach (its sessions have no
address) and is refused, as is a transition on `error.invoke.<id>` (SCXML reports a
failed `<invoke>` as `error.execution`, never by that name), and a read of
`_event.origin`/`_event.invokeid` in a family (psm sets the invoke id of a child's
event; statekit's family engine does not yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from statekit.compiler.expressions.tree import EventMeta, ExprNode, iter_nodes
from statekit.compiler.invocations import (
    ERROR_INVOKE_PREFIX,
    Invocation,
    MessageTarget,
    ToChild,
    ToParent,
)
from statekit.compiler.ir import CompiledChart
from statekit.scxml.export_expressions import NotExportable


@dataclass(frozen=True)
class ChartSet:
    """The charts an exported chart may invoke: name → version → compiled chart."""

    charts: Mapping[str, Mapping[int, CompiledChart]] = field(default_factory=dict)

    @classmethod
    def of(cls, charts: Iterable[CompiledChart]) -> ChartSet:
        """The set holding `charts` (a later one of the same name and version wins)."""
        found: dict[str, dict[int, CompiledChart]] = {}
        for chart in charts:
            found.setdefault(chart.name, {})[chart.version] = chart
        return cls(found)

    def child(self, invocation: Invocation, chain: tuple[str, ...]) -> CompiledChart:
        """The chart `invocation` starts; `NotExportable` naming it when the set lacks it,
        or when it invokes a chart of `chain` (its own document would hold itself)."""
        versions = self.charts.get(invocation.chart, {})
        wanted = invocation.version if invocation.version is not None else max(versions, default=0)
        chart = versions.get(wanted)
        if chart is None:
            version = "" if invocation.version is None else f" version {invocation.version}"
            raise NotExportable(
                f"the invoke {invocation.id!r} starts the chart {invocation.chart!r}{version}, "
                "which the export was not given (put its YAML file next to this chart's, "
                "or name it with --chart)"
            )
        if chart.name in chain:
            raise NotExportable(
                f"the invoke {invocation.id!r} starts {chart.name!r}, which invokes it back: "
                "an inline <content> document cannot hold itself"
            )
        return chart


def send_target(to: MessageTarget | None) -> str | None:
    """The `<send target>` of a `send` with `to:` (None: this instance's own queue)."""
    if to is None:
        return None
    if isinstance(to, ToParent):
        return "#_parent"
    if isinstance(to, ToChild):
        return f"#_{to.invoke_id}"
    raise NotExportable(
        "a send to another instance by its ID (to: {chart, instance}): an SCXML session "
        "has no address python-statemachine can send to"
    )


def check_family_event(event: str | None) -> None:
    """`NotExportable` for a transition on `error.invoke.<id>`."""
    if event is not None and event.startswith(ERROR_INVOKE_PREFIX):
        raise NotExportable(
            f"a transition on {event!r}: SCXML raises no such event (a failed <invoke> "
            "is error.execution)"
        )


def check_family_read(tree: ExprNode) -> None:
    """`NotExportable` for `_event.origin`/`_event.invokeid` read in a family."""
    for node in iter_nodes(tree):
        if isinstance(node, EventMeta) and node.field in ("origin", "invokeid"):
            raise NotExportable(
                f"_event.{node.field} in a chart that invokes or is invoked: psm sets the "
                "invoke id of a child's event, statekit's family engine does not yet"
            )

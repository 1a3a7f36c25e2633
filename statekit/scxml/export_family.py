"""What an exported document needs of the charts a chart invokes, and where a `send`
with `to:` goes (SCXML out, `statekit.scxml.export_document` writes the elements).

`invoke:` becomes `<invoke id>` with the child chart's own document inline in
`<content>` and a `<param>` per input field, so the export is given the chart set
(`ChartSet`: the charts by name, each version). `send: {to: parent}` becomes
`target="#_parent"`, `to: <invoke id>` becomes `target="#_<invoke id>"`. Refused, by
name: a `send` to another instance by its ID (an SCXML session has no address psm can
send to); a read of `_event.origin`/`_event.invokeid` in a family (psm sets the invoke
id of a child's event, statekit's family engine does not yet); a read of a
`done.invoke.<id>` payload field (psm's `done.invoke` carries none of the child's
`<donedata>`, which the export writes all the same). A transition on
`error.invoke.<id>` is kept with a comment: psm never raises that event (statekit
raises it only when the child fails, where psm's child raises `error.execution` in
itself), so the two run the same while no child fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from statekit.compiler.expressions.tree import EventMeta, EventRef, ExprNode, iter_nodes
from statekit.compiler.invocations import (
    DONE_INVOKE_PREFIX,
    ERROR_INVOKE_PREFIX,
    Invocation,
    MessageTarget,
    ToAddress,
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
        if invocation.choice is not None:  # psm's <invoke> has one inline <content>
            chosen = f"the invoke {invocation.id!r} chooses its chart"
            raise NotExportable(f"{chosen} (not exported yet)")
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
    if isinstance(to, ToAddress):
        raise NotExportable("a send to an address (to: {address}): not exported yet")
    raise NotExportable(
        "a send to another instance by its ID (to: {chart, instance}): an SCXML session "
        "has no address python-statemachine can send to"
    )


def family_event_note(event: str | None) -> str | None:
    """What an XML comment says at a transition on `error.invoke.<id>` (None: another
    event): psm never raises it; statekit does when the child fails."""
    if event is None or not event.startswith(ERROR_INVOKE_PREFIX):
        return None
    return (
        f"{event} is never raised by psm: statekit raises it when the child fails (an "
        "evaluation error, a refused start), where psm's child raises error.execution "
        "in itself"
    )


def check_done_invoke_read(tree: ExprNode, event: str) -> None:
    """`NotExportable` for a payload field read on `done.invoke.<id>` (`event`)."""
    for node in iter_nodes(tree):
        if isinstance(node, EventRef):
            raise NotExportable(
                f"event.{node.field} of {event!r}: psm's done.invoke carries none of the "
                "child's <donedata> (the child's output cannot reach the parent)"
            )


def check_family_read(tree: ExprNode) -> None:
    """`NotExportable` for `_event.origin` read in a family: psm's origin is its session's
    URI (`#_scxml_<session>`), statekit's the sending instance's ID."""
    for node in iter_nodes(tree):
        if isinstance(node, EventMeta) and node.field == "origin":
            raise NotExportable(
                "_event.origin in a chart that invokes or is invoked: psm's origin is its "
                "session's URI, statekit's the sending instance's ID"
            )


def done_invoke(event: str | None) -> str | None:
    """`event` when it is a `done.invoke.<id>`, else None."""
    return event if event is not None and event.startswith(DONE_INVOKE_PREFIX) else None

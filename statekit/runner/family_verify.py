"""`verify` across a family: each link between a child and its parent against both
histories (`runner.family_step` writes them in one transaction).

For every link naming an instance (as child or as parent), and for every child an
instance's history started, it reports, with the instance and the reason:

- a link whose child or parent is not stored;
- a child whose ID is not the one its invocation gives (`<parent>/<invoke id>/<sequence>`);
- a child without a parent history entry: the parent's history has no step at the link's
  sequence, or that step (replayed) started no invocation of that id;
- a parent whose history started a child with no instance (no link, no row);
- a status that disagrees with the histories: `done` while the child's chart is not
  final, or `active` while it is; `active` while the parent's state no longer has the
  invoking state active;
- an armed timer of a `cancelled` child (its timers are cancelled with it).

A parent's steps are replayed once more for this (the starts are derived from each
step's evidence), only for charts that invoke.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from statekit.engine.chart import START_EVENT, Chart, StartError
from statekit.engine.family import INVOCATION_CANCELLED
from statekit.engine.family_members import child_instance_id
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet
from statekit.runner.errors import CorruptRowError, RunnerError
from statekit.runner.family_ids import FAMILY_PREFIX
from statekit.runner.family_told import family_told
from statekit.runner.history import created_under, fold, initial_state
from statekit.runner.identifier_bounds import too_long
from statekit.runner.sent_meta import own_family_send
from statekit.runner.store.base import Store
from statekit.runner.store.family_rows import ACTIVE, CANCELLED, DONE, LinkRow
from statekit.runner.store.rows import EventRow, InstanceRow
from statekit.runner.stored_state import loads, state_of
from statekit.runner.timers import parse_timer_event_id
from statekit.runner.verify import VerifyReport, verify


@dataclass(frozen=True, slots=True)
class FamilyProblem:
    """One disagreement between a family link and a history."""

    instance_id: str
    reason: str

    def __str__(self) -> str:
        return f"instance {self.instance_id!r}: {self.reason}"


ChartsOf = Callable[[str], "ChartSet | None"]
"""The chart versions of a chart name (None: not available)."""


def family_problems(store: Store, charts_of: ChartsOf, instance_id: str) -> list[FamilyProblem]:
    """What the family links of `instance_id` (as child and as parent) disagree with."""
    with store.read():
        row = store.instance(instance_id)
        above = store.link(instance_id)
        below = store.children(instance_id)
    problems: list[FamilyProblem] = []
    if row is None:
        return problems
    over = too_long(instance_id, "its instance ID")
    if over is not None:  # (a child ID stored before they were bounded)
        problems.append(FamilyProblem(instance_id, f"{over}: refused by every command"))
    if above is not None:
        problems.extend(_as_child(store, charts_of, row, above))
    starts = _started(store, charts_of, row)
    if starts is None:
        return problems
    linked = {(c.invoke_id, c.started_sequence): c for c in below}
    refused = _refused_starts(store, instance_id)
    for (invoke_id, sequence), chart_name in sorted(starts.items()):
        child = child_instance_id(instance_id, invoke_id, sequence)
        link = linked.get((invoke_id, sequence))
        if link is None and (invoke_id, sequence) in refused:
            continue  # not started: its `error.invoke` is in the history
        with store.read():
            stored = store.instance(child)
        if link is None or stored is None:
            problems.append(
                FamilyProblem(
                    instance_id,
                    f"its history started child {child!r} (invoke {invoke_id!r} at sequence "
                    f"{sequence}), which has no " + ("instance" if stored is None else "link"),
                )
            )
        elif stored.chart_name != chart_name:  # (a chart chosen by `chart: {by, cases}`)
            problems.append(
                FamilyProblem(
                    child,
                    f"its chart is {stored.chart_name!r}, but its parent's step at sequence "
                    f"{sequence} started chart {chart_name!r}",
                )
            )
    for link in below:
        if (link.invoke_id, link.started_sequence) not in starts:
            problems.append(
                FamilyProblem(
                    link.child_instance_id,
                    f"a child without a parent history entry: {instance_id!r}'s step at "
                    f"sequence {link.started_sequence} started no invoke {link.invoke_id!r}",
                )
            )
    return problems


def _refused_starts(store: Store, instance_id: str) -> set[tuple[str, int]]:
    """(invoke id, sequence) of each start the family step refused (its child could not
    be created: `error.invoke.<id>` under the start's event ID + `#refused`)."""
    with store.read():
        events = store.events(instance_id)
    refused: set[tuple[str, int]] = set()
    for event in events:
        body = event.event_id.removeprefix(FAMILY_PREFIX)
        if not event.type.startswith(ERROR_PREFIX) or not body.endswith("#refused"):
            continue
        version = body.rsplit("@", 1)[-1].split("#", 1)[0]
        if version.isdigit():
            refused.add((event.type.removeprefix(ERROR_PREFIX), int(version)))
    return refused


ERROR_PREFIX = "error.invoke."


def verify_member(
    store: Store, own: ChartSet, charts_of: ChartsOf, instance_id: str
) -> VerifyReport:
    """`verify` of an instance of `own`'s chart or of another chart `charts_of` knows (a
    member of a family), with its family problems (`with_family`)."""
    charts = own
    with store.read():
        row = store.instance(instance_id)
    if row is not None and row.chart_name != own.current.name:
        charts = charts_of(row.chart_name) or own
    return with_family(verify(store, charts, instance_id), store, charts_of)


def with_family(report: VerifyReport, store: Store, charts_of: ChartsOf) -> VerifyReport:
    """`report` with the family problems of its instance among its differences
    (`family: ...`)."""
    found = family_problems(store, charts_of, report.instance_id)
    if not found:
        return report
    lines = tuple(f"family: {p}" for p in found)
    return replace(report, differences=(*report.differences, *lines))


def _as_child(
    store: Store, charts_of: ChartsOf, row: InstanceRow, link: LinkRow
) -> list[FamilyProblem]:
    """The link of child `row` against its own state and its parent."""
    child = row.instance_id
    problems = []
    with store.read():
        parent = store.instance(link.parent_instance_id)
    if parent is None:
        problems.append(
            FamilyProblem(child, f"its parent {link.parent_instance_id!r} is not stored")
        )
    expected = child_instance_id(link.parent_instance_id, link.invoke_id, link.started_sequence)
    if expected != child:
        problems.append(
            FamilyProblem(child, f"its invocation gives the ID {expected!r}, not this one")
        )
    charts = charts_of(row.chart_name)
    chart = None if charts is None else charts.get(row.chart_version)
    if chart is not None:
        state = _stored_state(store, chart, row)
        if state is not None:
            final = state.is_final
            if final and link.status == ACTIVE:
                problems.append(FamilyProblem(child, "status: stored active, its chart is final"))
            if not final and link.status == DONE:
                problems.append(FamilyProblem(child, "status: stored done, its chart is not final"))
    if link.status == CANCELLED:
        with store.read():
            armed = store.timers(child)
        problems.extend(
            FamilyProblem(
                child, f"armed timer {t.timer_id!r} of a cancelled child (its timers are "
                "cancelled with it)",
            )
            for t in armed
        )  # fmt: skip
    if parent is not None and link.status == ACTIVE:
        problems.extend(_invoking_state_left(store, charts_of, parent, link))
        with store.read():
            refused = [r for r in store.rejections(child) if r.reason == INVOCATION_CANCELLED]
        problems.extend(
            FamilyProblem(
                child, f"rejection of {r.event_id!r} as {INVOCATION_CANCELLED}, but it is active"
            )
            for r in refused
        )
    return problems


def _invoking_state_left(
    store: Store, charts_of: ChartsOf, parent: InstanceRow, link: LinkRow
) -> list[FamilyProblem]:
    charts = charts_of(parent.chart_name)
    chart = None if charts is None else charts.get(parent.chart_version)
    invocation = None if chart is None else chart.ir.invocation(link.invoke_id)
    if chart is None or invocation is None:
        return []
    state = _stored_state(store, chart, parent)
    if state is None or invocation.state in state.active_ids:
        return []
    return [
        FamilyProblem(
            link.child_instance_id,
            f"status: stored active, but its parent {link.parent_instance_id!r} left the "
            f"invoking state {chart.ir.states[invocation.state].path!r}",
        )
    ]


def _stored_state(store: Store, chart: Chart, row: InstanceRow) -> State | None:
    """The state stored in `row` (None: it does not read as a state of `chart`)."""
    try:
        return state_of(chart, row, store.timers)
    except RunnerError:
        return None


def _started(
    store: Store, charts_of: ChartsOf, row: InstanceRow
) -> dict[tuple[str, int], str] | None:
    """(invoke id, sequence) → chart name of every child the instance's history started
    (None: its chart invokes nothing, or cannot be replayed here). A start whose input
    or chart choice failed is none: the family gave the parent `error.invoke.<id>`."""
    charts = charts_of(row.chart_name)
    if charts is None:
        return None
    if not charts.current.ir.invocations:
        own = charts.get(row.chart_version)
        if own is None or not own.ir.invocations:
            return None  # (a chart that invokes nothing: no replay)
    with store.read():
        events = store.events(row.instance_id)
    first = created_under(events, row.chart_version)
    chart = charts.get(first)
    if chart is None:
        return None
    starts: dict[tuple[str, int], str] = {}
    try:
        created = chart.initialize(
            loads(row.initial_context, "creation context"), event_id=START_EVENT,
            now_ms=row.start_clock_ms, instance_id=row.instance_id,
        )  # fmt: skip
    except (StartError, CorruptRowError):
        return None
    _add(starts, created, 0)
    begin = initial_state(
        charts, first, row.initial_context, row.start_clock_ms, instance_id=row.instance_id
    )
    replayed = fold(
        charts, begin, events, frozenset(range(len(events) + 1)), instance_id=row.instance_id
    )
    states = {0: begin.state, **replayed.states}
    for event in events:
        before = states.get(event.sequence - 1)
        result = _step(charts, before, event)
        if result is not None:
            _add(starts, result, event.sequence)
    return starts


def _step(charts: ChartSet, before: State | None, event: EventRow) -> Result | None:
    chart: Chart | None = charts.get(event.chart_version)
    if before is None or chart is None:
        return None
    clock = event.clock_ms if type(event.clock_ms) is int else None
    timer = parse_timer_event_id(event.event_id)
    try:
        if timer is not None:
            return chart.fire(before, timer[0], generation=timer[1], now_ms=clock,
                              event_id=event.event_id, instance_id=event.instance_id)  # fmt: skip
        payload = own_family_send(
            event.event_id, event.instance_id, loads(event.payload, "payload")
        )
        told = family_told(chart, event.instance_id, event.event_id, event.type, payload)
        return chart.send(
            before, event.type, told, event_id=event.event_id, now_ms=clock,
            instance_id=event.instance_id,
        )  # fmt: skip
    except (CorruptRowError, ValueError):
        return None


def _add(starts: dict[tuple[str, int], str], result: Result, sequence: int) -> None:
    for start in result.invocations_started:
        if start.input is not None:
            starts[(start.invoke_id, sequence)] = start.chart

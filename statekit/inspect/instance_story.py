"""Everything the instance page shows, read in one consistent snapshot of the store and
replayed: the instance row, its timeline, outbox messages, armed timers, the state
before and after every step, and `verify`'s answer.

The states come from replaying the history with the runner's own fold
(`runner.history.fold`, the one `verify` uses), from the creation or, when
retention thinned the early events, from the snapshot they were thinned to.
The replay stops where the history disagrees with the chart (`verify` reports
why); steps after that point have no state to show, and the page says so
rather than guessing. A replay is cached by (instance, version, digest): an
instance whose version did not move is not replayed again (new rejections
change no state).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from statekit.engine.chart import Chart
from statekit.engine.state import State
from statekit.inspect.chart_lookup import chart_set
from statekit.inspect.timeline import TimelineEntry, build_timeline
from statekit.runner.chart_versions import ChartSet
from statekit.runner.errors import RunnerError
from statekit.runner.history import Replayed, created_under, fold, initial_state
from statekit.runner.pruned_start import pruned_start, thinned_keys
from statekit.runner.row_differences import STATUSES
from statekit.runner.store.base import Store
from statekit.runner.store.family_rows import LinkRow
from statekit.runner.store.retention_queries import NOTHING_PRUNED, watermarks
from statekit.runner.store.rows import EventRow, InstanceRow, OutboxRow, SnapshotRow, TimerRow
from statekit.runner.verify import VerifyReport, verify

CACHED_REPLAYS = 64
"""How many instances' replays (a state per step) and `verify` answers are kept."""


@dataclass(frozen=True, slots=True)
class InstanceStory:
    """One instance as the page shows it: its row, timeline, outbox messages (all
    statuses) and armed timer rows; `states` the replayed state after each history
    sequence (0 or `pruned_through`: the start), `replay_problems` where the replay
    stopped and why, `verified` `verify`'s report (None with `verify_error` when it
    could not run), `charts` the chart versions used (None: the chart is not available,
    neither given with `--chart` nor stored)."""

    row: InstanceRow
    timeline: tuple[TimelineEntry, ...]
    outbox: tuple[OutboxRow, ...]
    timers: tuple[TimerRow, ...]
    states: Mapping[int, State]
    replay_problems: tuple[str, ...]
    pruned_through: int
    charts: ChartSet | None
    verified: VerifyReport | None = None
    verify_error: str | None = None
    messages_by_sequence: Mapping[int, tuple[OutboxRow, ...]] = field(default_factory=dict)
    parent: LinkRow | None = None
    """The link to the instance that invoked this one (None: not invoked)."""
    children: tuple[LinkRow, ...] = ()
    """The links of the instances this one invoked, oldest first."""

    def chart_of(self, state: State | None) -> Chart | None:
        """The chart version `state` is on (None: not available)."""
        if state is None or self.charts is None:
            return None
        chart = self.charts.get(state.to_data()["version"])
        return chart if chart is not None and chart.digest == state.chart_digest else None


def read_story(store: Store, given: Iterable[Chart], instance_id: str) -> InstanceStory | None:
    """The instance's story (None: no such instance); a RunnerError when the store cannot
    be read."""
    with store.read():
        row = store.instance(instance_id)
        if row is None:
            return None
        events = store.events(instance_id)
        rejections = store.rejections(instance_id)
        outbox = store.outbox(list(STATUSES), instance_id)
        timers = store.timers(instance_id)
        snapshots = store.snapshots(instance_id)
        through = watermarks(store, instance_id).get(instance_id, NOTHING_PRUNED).events_through
        parent, children = store.link(instance_id), store.children(instance_id)
    charts = chart_set(store, given, row.chart_name)
    states: Mapping[int, State] = {}
    problems: tuple[str, ...] = ()
    verified: VerifyReport | None = None
    verify_error: str | None = None
    if charts is None:
        problems = (
            f"chart {row.chart_name!r} is not available: its source is not in the store; "
            "pass it with --chart",
        )
    else:
        states, problems = _replayed(charts, row, events, snapshots, timers, through)
        # everything verify compares that can change without the version moving
        key = (
            row.instance_id,
            row.version,
            row.chart_digest,
            len(events),
            len(rejections),
            len(snapshots),
            through,
            tuple((m.id, m.status, m.attempts, m.delivered_at) for m in outbox),
        )
        with _lock:
            known = _verified.get(key)
        if known is None:
            try:
                known = (verify(store, charts, instance_id), None)
            except RunnerError as exc:
                known = (None, str(exc))
            with _lock:
                if len(_verified) >= CACHED_REPLAYS:
                    _verified.pop(next(iter(_verified)))
                _verified[key] = known
        verified, verify_error = known
    by_sequence: dict[int, list[OutboxRow]] = {}
    for message in outbox:
        by_sequence.setdefault(message.sequence, []).append(message)
    return InstanceStory(
        row=row,
        timeline=build_timeline([e for e in events if e.sequence > through], rejections),
        outbox=tuple(outbox),
        timers=tuple(timers),
        states=states,
        replay_problems=problems,
        pruned_through=through,
        charts=charts,
        verified=verified,
        verify_error=verify_error,
        messages_by_sequence={k: tuple(v) for k, v in by_sequence.items()},
        parent=parent,
        children=tuple(children),
    )


_replays: dict[tuple[str, int, str, int], tuple[Mapping[int, State], tuple[str, ...]]] = {}
_verified: dict[tuple[object, ...], tuple[VerifyReport | None, str | None]] = {}
"""`verify`'s answers, by what it compares that can change (a replay of the whole history
with evidence: 2,000 events took a second)."""
_lock = threading.Lock()


def _replayed(
    charts: ChartSet,
    row: InstanceRow,
    events: list[EventRow],
    snapshots: list[SnapshotRow],
    timers: list[TimerRow],
    through: int,
) -> tuple[Mapping[int, State], tuple[str, ...]]:
    key = (row.instance_id, row.version, row.chart_digest, len(events))
    with _lock:
        cached = _replays.get(key)
    if cached is not None:
        return cached
    keep = frozenset(e.sequence for e in events if type(e.sequence) is int)
    if through:
        prefix = [e for e in events if e.sequence <= through]
        pruned = pruned_start(charts, through, prefix, snapshots)
        start: Replayed = pruned.replayed(timers)
        later = events[len(prefix) :]
        replayed = fold(
            charts, start, later, keep, recorded_key=thinned_keys(prefix),
            instance_id=row.instance_id,
        )  # fmt: skip
        problems = (*pruned.problems, *replayed.problems)
    else:
        first = created_under(events, row.chart_version)
        start = initial_state(
            charts, first, row.initial_context, row.start_clock_ms, instance_id=row.instance_id
        )
        replayed = fold(charts, start, events, keep, instance_id=row.instance_id)
        problems = replayed.problems
    states = dict(replayed.states)
    if start.state is not None:
        states[start.version] = start.state
    made = (states, tuple(problems))
    with _lock:
        if len(_replays) >= CACHED_REPLAYS:
            _replays.pop(next(iter(_replays)))
        _replays[key] = made
    return made

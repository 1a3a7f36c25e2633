"""Folding a stored history into a state, event by event, with the chart each event
was applied under (the pure engine does the work; this module only reads rows).
A migration entry (`runner.migration`) maps the state into its newer chart again;
a timer delivery (`runner.timers`: its event ID names the timer and generation) is
replayed with `Chart.fire`; every step gets the clock reading its row recorded.
A history written before instances stayed on their version (an event applied
under a newer version with no entry before it) is still carried over. The fold
starts from the version the instance was created under (`created_under`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from statekit.engine.chart import START_EVENT, Chart, StartError
from statekit.engine.result import NOT_DELIVERABLE, EmittedMessage, Status
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.chart_versions import ChartSet, carry_over
from statekit.runner.errors import ChartVersionError, CorruptRowError
from statekit.runner.evidence import evidence_json
from statekit.runner.family_told import family_told
from statekit.runner.hashes import encode_payload
from statekit.runner.identifier_bounds import consume_oversized, key_too_long
from statekit.runner.keys import idempotency_key
from statekit.runner.loop_parking import consume_parked, records_parking, replays_parking
from statekit.runner.migration import Stranded, entry_evidence, is_migration, map_state
from statekit.runner.repeated_facts import RepeatedFact, consume_delivery
from statekit.runner.sent_meta import SentIds, own_family_send
from statekit.runner.store.rows import EventRow, RecordedKey
from statekit.runner.stored_state import loads
from statekit.runner.timers import parse_timer_event_id

KeyLookup = Callable[[str, str], RecordedKey | None]
"""The accepted event holding (event type, idempotency key) in the store, if any."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """The state after folding events; `problems` say where the fold disagreed with the
    stored history (it stops at the first); `emitted` maps sequence → messages;
    `states` the state after each requested sequence (for snapshot checks);
    `evidence` each replayed event's evidence as canonical JSON, without the race it
    followed (when asked for); `armed_at` the sequence of the event that armed each
    timer, by (timer ID, generation) (0: the creation)."""

    state: State | None
    version: int
    problems: tuple[str, ...] = ()
    emitted: Mapping[int, tuple[EmittedMessage, ...]] = field(default_factory=dict)
    states: Mapping[int, State] = field(default_factory=dict)
    evidence: Mapping[int, str] = field(default_factory=dict)
    armed_at: Mapping[tuple[str, int], int] = field(default_factory=dict)


def created_under(events: Sequence[EventRow], stored_version: int) -> int:
    """The chart version an instance was created under: its first event's, unless that
    event is a migration entry (then the version its payload says it migrated from: a
    migrated instance may have no event of its own before it); `stored_version`, the
    instance row's, when there are no events. A `from` that cannot be read gives the
    entry's version (the replay then reports the entry)."""
    if not events:
        return stored_version
    first = events[0]
    if is_migration(first.event_id, first.type):
        try:
            payload = loads(first.payload, "the migration entry's payload")
        except CorruptRowError:
            payload = None
        if isinstance(payload, dict) and type(payload.get("from")) is int:
            return int(payload["from"])
    return first.chart_version


def initial_state(
    charts: ChartSet,
    version: int,
    initial_context: str,
    clock_ms: int | None = None,
    *,
    instance_id: str | None = None,
) -> Replayed:
    """The instance's state at version 0 (with its creation messages at sequence 0);
    `clock_ms`: the clock reading the creation recorded; `instance_id`: what
    `instance.id` reads."""
    chart = charts.get(version)
    if chart is None:
        problem = f"chart version {version} is not available to replay"
        return Replayed(state=None, version=0, problems=(problem,))
    try:
        context = loads(initial_context, "the stored creation context")
        result = chart.initialize(
            context, event_id=START_EVENT, now_ms=clock_ms, instance_id=instance_id
        )
    except (CorruptRowError, StartError) as exc:
        problem = f"cannot rebuild the creation context: {exc}"
        return Replayed(state=None, version=0, problems=(problem,))
    armed = {(t.id, t.generation): 0 for t in result.timers_armed}
    return Replayed(state=result.state, version=0, emitted={0: result.emitted}, armed_at=armed)


def fold(
    charts: ChartSet,
    start: Replayed,
    events: list[EventRow],
    keep: frozenset[int] = frozenset(),
    *,
    with_evidence: bool = False,
    recorded_key: KeyLookup | None = None,
    instance_id: str | None = None,
) -> Replayed:
    """Apply `events` (contiguous after `start.version`) to `start.state`; keep the
    states after the sequences in `keep`, and each event's evidence if asked. A timer
    delivery whose event repeats the fact of an earlier accepted event (its idempotency
    key) is consumed as the runner consumed it (`runner.repeated_facts`): the events
    folded show the holder, and `recorded_key` those before `start` (a snapshot's).
    `instance_id`: what `instance.id` reads in each step."""
    state, version = start.state, start.version
    if state is None:
        return start
    problems = list(start.problems)
    emitted = dict(start.emitted)
    states: dict[int, State] = {}
    evidence: dict[int, str] = {}
    armed_at = dict(start.armed_at)
    holders: dict[tuple[str, str], RecordedKey] = {}  # the accepted events by (type, key)
    sent_ids = SentIds()
    for row in events:
        where = f"event #{row.sequence} ({row.event_id}, {row.type})"
        if row.sequence != version + 1:
            problems.append(f"history: expected sequence {version + 1}, found {row.sequence}")
            break
        chart = charts.get(row.chart_version)
        if chart is None:
            problems.append(f"{where}: chart version {row.chart_version} is not available")
            break
        if is_migration(row.event_id, row.type):
            try:
                state, text, timer_ids, entered_timers = _migrated(charts, state, chart, row)
            except (Stranded, CorruptRowError) as exc:
                problems.append(f"{where}: {exc}")
                break
            version = row.sequence
            if timer_ids:  # a renamed state's armed timers moved with it
                armed_at = {(timer_ids.get(i, i), g): at for (i, g), at in armed_at.items()}
            for armed_timer in entered_timers:  # armed by the states the migration entered
                armed_at[(armed_timer.id, armed_timer.generation)] = version
            if with_evidence:
                evidence[version] = text
            if version in keep:
                states[version] = state
            continue
        try:
            state = carry_over(state, chart)
            payload = loads(row.payload, "its stored payload")
        except (ChartVersionError, CorruptRowError) as exc:
            problems.append(f"{where}: {exc}")
            break
        clock = row.clock_ms if type(row.clock_ms) is int else None
        timer = parse_timer_event_id(row.event_id)
        armed = None if timer is None else state.timer(timer[0])
        if timer is None:
            told = sent_ids.payload(row.event_id, payload)  # an own send: which one
            told = own_family_send(row.event_id, instance_id, told)  # (in a family step)
            told = family_told(chart, instance_id, row.event_id, row.type, told)  # a child's
            result = chart.send(
                state, row.type, told, event_id=row.event_id, now_ms=clock,
                instance_id=instance_id,
            )  # fmt: skip
            event_type, sent = row.type, payload
        else:
            result = chart.fire(
                state, timer[0], generation=timer[1], now_ms=clock, event_id=row.event_id,
                instance_id=instance_id,
            )  # fmt: skip
            event_type, sent = result.event, None if armed is None else dict(armed.payload)
        sent_ids.record(row.event_id, result)
        key = None  # the key of the fact the event records, when the chart accepts it
        if result.status is not Status.REJECTED and isinstance(sent, dict):
            key = idempotency_key(chart.ir, event_type, sent)
        # consumed unread, as `fire` does, where that is what was recorded: a delivery
        # applied before the bound existed (0.1.0, on SQLite) keeps its meaning
        why = key_too_long(key) if row.status == Status.REJECTED.value else None
        if why is not None and armed is not None:
            result = consume_oversized(chart, state, armed, why, row.event_id)
            key = None
        elif (  # a loop the worker parked (`runner.loop_parking`): consumed again
            row.status == Status.REJECTED.value
            and timer is not None
            and armed is not None
            and replays_parking(armed, timer[1], clock)
            and records_parking(row.evidence, row.event_id)
        ):
            result, key = consume_parked(chart, state, armed, row.event_id), None
        if key is not None and armed is not None:
            holder = holders.get((event_type, key)) or _stored_holder(
                recorded_key, start.version, event_type, key
            )
            if holder is not None:  # a delivery repeating a recorded fact: consumed
                same = encode_payload(event_type, sent).sha256 == holder.payload_sha256
                fact = RepeatedFact(event_type, key, holder.event_id, holder.sequence, same)
                result = consume_delivery(chart, state, armed, fact, row.event_id)
        if result.status.value != row.status:
            why = f" ({result.reason})" if result.status is Status.REJECTED else ""
            problems.append(
                f"{where}: recorded {row.status}, replay says {result.status.value}{why}"
            )
            break
        if result.status is Status.REJECTED and (timer is None or result.reason in NOT_DELIVERABLE):
            what = (
                "an event" if timer is None else f"timer {timer[0]!r}, not armed (or paused) then"
            )
            problems.append(f"{where}: records a rejected delivery of {what}")
            break
        state, version = result.state, row.sequence
        if key is not None and result.status is not Status.REJECTED:
            holders.setdefault(
                (event_type, key), RecordedKey(row.sequence, row.event_id, row.payload_sha256)
            )
        for new in result.timers_armed:
            armed_at[(new.id, new.generation)] = version
        if with_evidence:
            evidence[version] = evidence_json(result, None, row.event_id)
        if result.emitted:
            emitted[version] = result.emitted
        if version in keep:
            states[version] = state
    return Replayed(
        state=state,
        version=version,
        problems=tuple(problems),
        emitted=emitted,
        states=states,
        evidence=evidence,
        armed_at=armed_at,
    )


def _stored_holder(
    lookup: KeyLookup | None, through: int, event_type: str, key: str
) -> RecordedKey | None:
    """The holder of the key `lookup` finds in the store among the events through
    `through` (those before the snapshot the fold starts from; a later one is folded)."""
    holder = None if lookup is None else lookup(event_type, key)
    return holder if holder is not None and holder.sequence <= through else None


def _migrated(
    charts: ChartSet, state: State, new: Chart, row: EventRow
) -> tuple[State, str, Mapping[str, str], tuple[ArmedTimer, ...]]:
    """A migration entry replayed: `state` mapped into `new` (the entry's chart version)
    as `new` declares, at the clock reading the entry recorded, the evidence that gives,
    the timer IDs it moved and the timers the states it entered armed; `Stranded` when it
    does not map."""
    if row.status != "APPLIED":
        raise Stranded(f"a migration entry has status {row.status!r}, not 'APPLIED'")
    old = charts.get(state.to_data()["version"])
    if old is None or old.digest != state.chart_digest:
        raise Stranded("the chart version the state was on is not available")
    clock = row.clock_ms if type(row.clock_ms) is int else None
    mapped = map_state(state, old, new, clock)
    armed = tuple(t for t in mapped.state.timers if t.id in mapped.armed_timers)
    evidence = entry_evidence(state, mapped.state, old, new, mapped)
    return mapped.state, evidence, mapped.timer_ids, armed

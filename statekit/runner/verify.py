"""`verify`: rebuild an instance from its events alone and compare with what is stored.

It compares everything the store keeps that the history determines, and
reports every difference, never choosing a side: neither the stored row nor
the replay is "corrected". Per instance (`verify`): the instance row (chart
version and digest, version, configuration, context, history), each event
(its payload against its sha256 and canonical form, its status and evidence
against the replay: a timer delivery consumed because its event repeated a
recorded fact replays so only when an earlier accepted event holds that fact,
with the reason and the holder its evidence names; its idempotency key against
the key its chart version gives its payload, and no fact recorded twice), the
outbox (each message, its order, and whether its delivery state is
self-consistent), the armed timers (the instance row's
`timers` and the rows of `statekit_timers`, each column, against the
replayed state; each event replayed with the clock reading it records, so
the due times are recomputed), the snapshots, and the audited
rejections (a rejection must replay as the same rejection at its version; a
history conflict, or a duplicate of a fact by idempotency key, must name what
the history holds). For the whole store
(`verify_store`): the database's own integrity check, the recorded
migrations, each stored chart source against its digest, name and version
(and each version against one digest),
and rows naming instances or messages that do not exist.

What cannot be compared, and why: wall-clock times (`created_at`,
`recorded_at`, ...; nothing derives them), a dispatcher's lease
(`claimed_by`, `claimed_until`: it only delays or repeats a delivery, which
is at least once anyway), the conflict an event was re-decided after (the
`race` in its evidence: known only to its writer; its form is checked), an
event ID that emitted nothing (nothing else records it), and row keys beyond
their order.

An instance whose early events were thinned by retention
(`statekit.runner.retention`) is checked from the snapshot they were thinned to
(`pruned_start`): that snapshot against its stored sha256, chart and engine, the
thinned rows as a whole prefix each keeping its whole hash, and everything after
it as above; the report says where the check started (`checked_from`). What
cannot be checked then: the snapshot's state against the events before it, the
audited rejections before it, the messages of those events beyond their
delivery state, and the arming sequence of a timer armed before it. A delivered
message of an event at or before the instance's `outbox_through` that is not
stored was removed by retention, and an inbox row naming a message of such an
instance is not reported as unknown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statekit.compiler.pipeline import compile_source
from statekit.compiler.serialize import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.errors import evaluation_message
from statekit.engine.result import Status
from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet, carry_over
from statekit.runner.errors import ChartVersionError, RunnerError, UnknownInstanceError
from statekit.runner.evidence import EvidenceFormError, evidence_data
from statekit.runner.hashes import encode_payload
from statekit.runner.history import created_under, fold, initial_state
from statekit.runner.identifier_bounds import key_refusal
from statekit.runner.json_text import parse_json
from statekit.runner.keys import idempotency_key
from statekit.runner.outcome import BUSINESS_KEY_CONFLICT, DUPLICATE_FACT, KEY_TOO_LONG
from statekit.runner.pruned_start import is_thinned, pruned_start, thinned_keys
from statekit.runner.snapshots import snapshot_state
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import MIGRATIONS
from statekit.runner.store.retention_queries import NOTHING_PRUNED, watermarks
from statekit.runner.store.rows import EventRow, OutboxRow, RejectionRow, SnapshotRow, TimerRow
from statekit.runner.timers import expected_rows, timers_text

_STATUSES = ("pending", "delivered", "dead")
_RACE_KEYS = {"reason", "expected_version", "version", "event_id", "sequence"}
_FACT_AUDITS = {
    ("ALREADY_APPLIED", DUPLICATE_FACT),
    ("CONFLICT", BUSINESS_KEY_CONFLICT),
}


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The comparison of one instance with the replay of its history."""

    instance_id: str
    version: int
    replayed_version: int
    events: int
    differences: tuple[str, ...]
    snapshot_problems: tuple[str, ...]
    checked_from: int = 0
    """The snapshot the check started from (its events before it were pruned); 0: the
    instance's creation, every event replayed."""

    @property
    def ok(self) -> bool:
        """Whether everything stored about the instance equals the replay."""
        return not self.differences and not self.snapshot_problems

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit verify --format json`)."""
        return {
            "instance": self.instance_id,
            "ok": self.ok,
            "version": self.version,
            "replayed_version": self.replayed_version,
            "events": self.events,
            "differences": list(self.differences),
            "snapshot_problems": list(self.snapshot_problems),
            "checked_from": self.checked_from,
        }


def verify(store: Store, charts: ChartSet, instance_id: str) -> VerifyReport:
    """Replay every event of the instance and compare (see the module docstring)."""
    with store.read():
        row = store.instance(instance_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        events = store.events(instance_id)
        outbox = store.outbox(list(_STATUSES), instance_id)
        snapshots = store.snapshots(instance_id)
        rejections = store.rejections(instance_id)
        timers = store.timers(instance_id)
        marks = watermarks(store, instance_id).get(instance_id, NOTHING_PRUNED)
    differences: list[str] = []
    name = charts.current.name
    chart = charts.get(row.chart_version)
    if chart is None:
        differences.append(
            f"chart_version: stored {row.chart_version}, not a version of chart {name!r} "
            "available to replay"
        )
    elif chart.digest != row.chart_digest:
        differences.append(
            f"chart_digest: stored {row.chart_digest}, chart {name!r} version "
            f"{row.chart_version} has {chart.digest}"
        )
    if events and events[-1].chart_version != row.chart_version:
        differences.append(
            f"chart_version: stored {row.chart_version}, the last event was applied under "
            f"version {events[-1].chart_version}"
        )
    through = marks.events_through
    prefix = [e for e in events if e.sequence <= through]
    later = events[len(prefix) :] if through else events
    keep = frozenset(s.through_sequence for s in snapshots if isinstance(s.through_sequence, int))
    rejected_at = frozenset(r.version for r in rejections if isinstance(r.version, int))
    if through:  # the early events were pruned: from the snapshot they were pruned to
        pruned = pruned_start(charts, through, prefix, snapshots)
        differences.extend(pruned.problems)
        start = pruned.replayed(timers)
        lookup = thinned_keys(prefix)
        replayed = fold(
            charts, start, later, keep | rejected_at, with_evidence=True, recorded_key=lookup
        )
        rejections = [r for r in rejections if type(r.version) is not int or r.version >= through]
    else:
        first = created_under(events, row.chart_version)
        start = initial_state(charts, first, row.initial_context, row.start_clock_ms)
        replayed = fold(charts, start, events, keep | rejected_at, with_evidence=True)
    differences.extend(replayed.problems)
    if replayed.version != row.version:
        differences.append(f"version: stored {row.version}, replayed {replayed.version}")
    for event in events:
        if event.sequence <= through and is_thinned(event):
            continue  # its hash is checked by `pruned_start`, its payload is gone
        differences.extend(_event_differences(event, replayed.evidence.get(event.sequence)))
    differences.extend(_key_differences(charts, events, through))
    if replayed.state is not None and not replayed.problems:
        stored = {}
        for key, text in (
            ("configuration", row.columns.configuration),
            ("context", row.columns.context),
            ("history", row.columns.history),
        ):
            try:
                stored[key] = parse_json(text)
            except ValueError:
                stored[key] = f"<not JSON: {str(text)[:60]!r}>"
        differences.extend(_compare(stored, replayed.state.to_data()))
        expected = [
            (seq, m.message_id, m.type, canonical_json(dict(m.payload)))
            for seq, messages in sorted(replayed.emitted.items())
            for m in messages
        ]
        have = {(r.sequence, r.message_id) for r in outbox}
        expected = [  # a message of an event at or before `outbox_through` may be pruned
            m for m in expected if m[0] > marks.outbox_through or (m[0], m[1]) in have
        ]
        replayable = [r for r in outbox if r.sequence > through] if through else outbox
        differences.extend(_outbox_differences(expected, replayable))
        armed_text = timers_text(replayed.state)
        if row.columns.timers != armed_text:
            differences.append(f"timers: stored {row.columns.timers}, replayed {armed_text}")
        armed = expected_rows(instance_id, replayed.state, replayed.armed_at)
        differences.extend(_timer_differences(armed, timers))
        states = {**replayed.states, through: start.state} if start.state is not None else {}
        for rejection in rejections:
            differences.extend(_rejection_differences(rejection, charts, states, events))
    for message in outbox:
        differences.extend(_delivery_differences(message))
    problems: list[str] = []
    for snap in sorted(snapshots, key=_order):
        checked = snapshot_state(charts, snap)
        state = checked.state
        if state is None:
            problems.append(f"refused {checked.refused}")
            continue
        at = snap.through_sequence
        if type(at) is int and at < through:
            continue  # before the events the check starts after: checked for itself only
        truth = replayed.states.get(at) if at != through else start.state
        if truth is None:
            problems.append(f"snapshot at {at}: the replay did not reach that sequence")
        elif truth != state:
            found = "; ".join(_compare(state.to_data(), truth.to_data(), "snapshot", "replayed"))
            problems.append(f"snapshot at {at} differs from the replay: {found}")
    return VerifyReport(
        instance_id=instance_id,
        version=row.version,
        replayed_version=replayed.version,
        events=len(events),
        differences=tuple(differences),
        snapshot_problems=tuple(problems),
        checked_from=through,
    )


def verify_store(store: Store, given: Sequence[Chart] = ()) -> list[str]:
    """What is wrong with the store as a whole (see the module docstring); `given`: the
    chart files passed to verify (a stored chart without source is checked against
    them). A check that cannot read what it needs says so and the others go on."""
    problems = [f"integrity check failed: {p}" for p in store.integrity_problems()]
    checks = (
        ("the recorded migrations", _migration_problems),
        ("the stored charts", lambda s: _chart_problems(s, given)),
        ("the charts instances, events and snapshots name", lambda s: s.unregistered_charts()),
        ("rows of instances that are not stored", _orphan_problems),
        ("the inbox", _inbox_problems),
    )
    for what, check in checks:
        try:
            problems.extend(check(store))
        except RunnerError as exc:
            problems.append(f"cannot check {what}: {exc}")
    return problems


def _migration_problems(store: Store) -> list[str]:
    recorded = store.migration_rows()
    known = [(m.version, m.description) for m in MIGRATIONS[: len(recorded)]]
    if recorded != known:
        return [f"schema migrations: recorded {recorded}, this statekit has {known}"]
    return []


def _chart_problems(store: Store, given: Sequence[Chart]) -> list[str]:
    problems = []
    by_digest = {chart.digest: chart for chart in given}
    rows = store.charts()
    digests: dict[tuple[str, int], list[str]] = {}
    for row in rows:
        digests.setdefault((row.name, row.version), []).append(row.digest)
    for (name, version), found in sorted(digests.items(), key=repr):
        if len(found) > 1:  # a version is one digest (`chart_versions.refuse_changed_version`)
            problems.append(
                f"stored chart {name!r} version {version} has {len(found)} digests: "
                + ", ".join(sorted(found))
            )
    for row in rows:
        where = f"stored chart {row.name!r} version {row.version} ({row.digest})"
        chart = by_digest.get(row.digest)
        if row.source is not None:
            result = compile_source(row.source, f"<stored chart {row.name} v{row.version}>")
            if result.chart is None:
                problems.append(f"{where}: its stored source does not compile")
                continue
            chart = Chart(result.chart, source=row.source)
            if chart.digest != row.digest:
                problems.append(f"{where}: its stored source has digest {chart.digest}")
                continue
        if chart is not None and (chart.name, chart.version) != (row.name, row.version):
            problems.append(
                f"{where}: the chart of that digest is {chart.name!r} version {chart.version}"
            )
    return problems


def _orphan_problems(store: Store) -> list[str]:
    return [
        f"{table}: {count} row(s) of instance {instance_id!r}, which is not stored"
        for table, instance_id, count in store.orphans()
    ]


def _inbox_problems(store: Store) -> list[str]:
    pruned = {i for i, marks in watermarks(store).items() if marks.outbox_through}
    return [
        f"statekit_inbox: consumer {consumer!r} processed message {message_id!r} of "
        f"instance {instance_id!r}, which the outbox does not have"
        for consumer, instance_id, message_id in store.unknown_inbox_messages()
        if instance_id not in pruned
    ]


def _event_differences(event: EventRow, replayed_evidence: str | None) -> Iterator[str]:
    """An event row against itself (payload, hash) and the replay (evidence)."""
    where = f"event #{event.sequence} ({event.event_id})"
    try:
        payload = parse_json(event.payload)
    except ValueError:
        payload = None  # the replay reports it
    if isinstance(payload, dict) and isinstance(event.type, str):
        encoded = encode_payload(event.type, payload)
        if encoded.sha256 != event.payload_sha256:
            yield (
                f"{where}: payload_sha256: stored {event.payload_sha256}, its type and "
                f"payload hash to {encoded.sha256}"
            )
        if encoded.text != event.payload:
            yield f"{where}: payload is not in the canonical form the runner writes"
    if replayed_evidence is None:
        return
    try:
        stored = evidence_data(parse_json(event.evidence), event.event_id)
    except EvidenceFormError as exc:
        yield f"{where}: {exc}"
        return
    except ValueError as exc:
        yield f"{where}: evidence is not valid JSON: {exc}"
        return
    race = stored.pop("race", None)
    if race is not None and not (isinstance(race, dict) and set(race) == _RACE_KEYS):
        yield f"{where}: evidence: the race it records is malformed: {race!r}"
    replayed = evidence_data(parse_json(replayed_evidence), event.event_id)
    if canonical_json(stored) != canonical_json(replayed):
        yield f"{where}: evidence differs from the replay's"


def _key_of(charts: ChartSet, event_type: str, payload_text: str, version: int) -> str | None:
    """The idempotency key chart version `version` gives a stored payload (None: none, or
    the version or payload cannot be read: the replay reports those)."""
    chart = charts.get(version) if type(version) is int else None
    try:
        payload = parse_json(payload_text)
    except ValueError:
        return None
    if chart is None or not isinstance(payload, dict) or not isinstance(event_type, str):
        return None
    return idempotency_key(chart.ir, event_type, payload)


def _key_differences(
    charts: ChartSet, events: list[EventRow], thinned_through: int = 0
) -> Iterator[str]:
    """Each event's stored idempotency key against its chart version's (not of a thinned
    row: its payload is gone), and each fact once."""
    first: dict[tuple[str, str], EventRow] = {}
    for event in events:
        where = f"event #{event.sequence} ({event.event_id})"
        key = _key_of(charts, event.type, event.payload, event.chart_version)
        if event.status == "REJECTED":
            key = None  # a consumed timer delivery records no fact
        if event.sequence <= thinned_through and is_thinned(event):
            key = event.idempotency_key
        if event.idempotency_key != key:
            yield (
                f"{where}: idempotency_key: stored {event.idempotency_key!r}, its chart version "
                f"gives {key!r}"
            )
        if event.idempotency_key is None:
            continue
        taken = first.setdefault((event.type, event.idempotency_key), event)
        if taken is not event:
            yield (
                f"{where}: records the {event.type} of key {event.idempotency_key} that event "
                f"#{taken.sequence} ({taken.event_id}) recorded"
            )


def _fact_differences(
    row: RejectionRow, detail: dict[str, Any], charts: ChartSet, events: list[EventRow]
) -> Iterator[str]:
    """An audited duplicate or conflict of a fact: the history must hold the fact under
    the event the detail names, recorded before, with the same (duplicate) or another
    (conflict) payload."""
    where = f"rejection of {row.event_id!r} at version {row.version}"
    holder = {e.sequence: e for e in events}.get(detail.get("sequence", -1))
    same = row.status == "ALREADY_APPLIED"
    if (
        holder is None
        or holder.event_id != detail.get("event_id")
        or holder.event_id == row.event_id
        or holder.type != row.type
        or holder.sequence > row.version
        or holder.idempotency_key is None
        or _key_of(charts, row.type, row.payload, holder.chart_version) != holder.idempotency_key
        or (holder.payload_sha256 == row.payload_sha256) != same
    ):
        payload = "the same" if same else "another"
        yield (
            f"{where}: the history does not hold that {row.type}'s key under event "
            f"{detail.get('event_id')!r} at #{detail.get('sequence')} with {payload} payload"
        )


def _outbox_differences(
    expected: list[tuple[int, str, str, str]], outbox: list[OutboxRow]
) -> Iterator[str]:
    """The stored messages against the replay's, as a set and in outbox order."""
    actual = [(r.sequence, r.message_id, r.type, r.payload) for r in outbox]
    wanted, have = set(expected), set(actual)
    for seq, mid, kind, _ in sorted(wanted - have, key=str):
        yield f"outbox: message {mid} ({kind}) of event #{seq} is missing or differs"
    for seq, mid, kind, _ in sorted(have - wanted, key=str):
        yield f"outbox: message {mid} ({kind}) at #{seq} is not in the replay"
    if wanted == have and actual != expected:
        yield "outbox: the messages are stored out of the order they were emitted in"


def _timer_differences(expected: list[TimerRow], stored: list[TimerRow]) -> Iterator[str]:
    """The stored timer rows against the replayed state's armed timers, column by column."""
    wanted = {t.timer_id: t for t in expected}
    for row in stored:
        where = f"statekit_timers: timer {row.timer_id!r}"
        truth = wanted.pop(row.timer_id, None) if isinstance(row.timer_id, str) else None
        if truth is None:
            yield f"{where} (generation {row.generation!r}) is stored, the replay has no such timer"
            continue
        for name in ("generation", "event", "payload", "due_ms", "sequence"):
            have, want = getattr(row, name), getattr(truth, name)
            if type(have) is not type(want) or have != want:
                yield f"{where}: {name}: stored {have!r}, replayed {want!r}"
    for timer_id, truth in wanted.items():
        yield (
            f"statekit_timers: timer {timer_id!r} (generation {truth.generation}, due "
            f"{truth.due_ms}) is armed in the replay, the store has no row of it"
        )


def _delivery_differences(row: OutboxRow) -> Iterator[str]:
    """A message's delivery state against itself (nothing replays a delivery)."""
    where = f"outbox: message {row.message_id}"
    if row.status not in _STATUSES:
        yield f"{where}: status {row.status!r} is not one of {', '.join(_STATUSES)}"
        return
    if type(row.attempts) is not int or row.attempts < 0:
        yield f"{where}: attempts {row.attempts!r} is not a count"
        return
    if (row.status == "delivered") != (row.delivered_at is not None):
        yield f"{where}: status {row.status} with delivered_at {row.delivered_at!r}"
    if row.status != "pending" and row.attempts < 1:
        yield f"{where}: status {row.status} after {row.attempts} attempts"
    if row.status == "dead" and row.last_error is None:
        yield f"{where}: dead without a last error"
    if row.last_error is not None and (row.attempts < 1 or row.status == "delivered"):
        yield f"{where}: a last error with status {row.status} after {row.attempts} attempts"
    if row.last_error is None and row.attempts >= 1 and row.status == "pending":
        yield f"{where}: pending after {row.attempts} failed attempts without a last error"


def _rejection_differences(
    row: RejectionRow, charts: ChartSet, states: Mapping[int, State], events: list[EventRow]
) -> Iterator[str]:
    """An audited rejection or conflict against the replayed history."""
    where = f"rejection of {row.event_id!r} at version {row.version}"
    try:
        payload = parse_json(row.payload)
        detail = parse_json(row.detail)
    except ValueError as exc:
        yield f"{where}: {exc}"
        return
    if not isinstance(payload, dict) or not isinstance(row.type, str):
        yield f"{where}: payload is not a JSON object"
        return
    encoded = encode_payload(row.type, payload)
    if encoded.sha256 != row.payload_sha256 or encoded.text != row.payload:
        yield f"{where}: payload_sha256 {row.payload_sha256} is not its payload's"
    state = states.get(row.version)
    if state is None:
        yield f"{where}: the replay has no state at that version"
        return
    if row.status == "REJECTED":
        candidates = [charts.get(state.to_data()["version"]), charts.current]
        for chart in dict.fromkeys(c for c in candidates if c is not None):
            try:
                moved = state if chart.digest == state.chart_digest else _moved(state, chart)
            except ValueError:
                continue
            key = idempotency_key(chart.ir, row.type, payload)
            refusal = key_refusal(key, row.event_id) if row.reason == KEY_TOO_LONG else None
            if refusal is not None:  # refused by the runner before the chart saw it
                got: tuple[Status, str | None, str | None] = (
                    Status.REJECTED,
                    KEY_TOO_LONG,
                    refusal,
                )
            else:
                result = chart.send(moved, row.type, payload, event_id=row.event_id)
                got = (result.status, result.reason, result.message)
            stored = row.message if row.message is None else evaluation_message(row.message)
            if got == (Status.REJECTED, row.reason, stored) and (
                not isinstance(detail, dict) or set(detail) <= {"race"}
            ):
                return
        yield f"{where}: the replay does not reject it as {row.reason!r} with that message"
        return
    if isinstance(detail, dict) and (row.status, row.reason) in _FACT_AUDITS:
        if detail.get("version") != row.version or detail.get("reason") != row.reason:
            yield f"{where}: detail {detail!r} is not about this {row.reason}"
            return
        yield from _fact_differences(row, detail, charts, events)
        return
    if row.status != "CONFLICT" or not isinstance(detail, dict):
        yield f"{where}: status {row.status!r} with detail {detail!r}"
        return
    if detail.get("version") != row.version or detail.get("reason") != row.reason:
        yield f"{where}: detail {detail!r} is not about this conflict"
        return
    by_id = {e.event_id: e for e in events}
    by_sequence = {e.sequence: e for e in events}
    holder = by_id.get(row.event_id)
    if row.reason == "EVENT_ID_PAYLOAD_CONFLICT":
        if holder is None or holder.payload_sha256 == row.payload_sha256:
            yield f"{where}: the history does not hold that event ID with another payload"
        elif detail.get("sequence") != holder.sequence or detail.get("event_id") != row.event_id:
            yield f"{where}: detail {detail!r} does not name event #{holder.sequence}"
    elif row.reason == "DUPLICATE_OR_OLD_SEQUENCE":
        taken = by_sequence.get(detail.get("sequence", -1))
        if taken is None or taken.event_id != detail.get("event_id"):
            yield f"{where}: detail {detail!r} does not match the history"
    else:
        yield f"{where}: reason {row.reason!r} is not a history conflict"


def _order(row: SnapshotRow) -> tuple[bool, int, str]:
    """Snapshots by through-sequence (a damaged, non-integer one last)."""
    at = row.through_sequence
    return (True, 0, repr(at)) if type(at) is not int else (False, at, "")


def _moved(state: State, chart: Chart) -> State:
    try:
        return carry_over(state, chart)
    except ChartVersionError as exc:
        raise ValueError(str(exc)) from exc


def _compare(
    left: Mapping[str, Any], right: Mapping[str, Any], a: str = "stored", b: str = "replayed"
) -> Iterator[str]:
    """Differences in configuration, context (per field) and history, in words."""
    lconf, rconf = left.get("configuration", []), right.get("configuration", [])
    if not isinstance(lconf, list) or sorted(map(str, lconf)) != sorted(map(str, rconf)):
        yield f"configuration: {a} {lconf}, {b} {rconf}"
    lc, rc = left.get("context", {}), right.get("context", {})
    if isinstance(lc, dict) and isinstance(rc, dict):
        for key in sorted(set(lc) | set(rc)):
            if lc.get(key, "<absent>") != rc.get(key, "<absent>"):
                yield (
                    f"context.{key}: {a} {lc.get(key, '<absent>')!r}, "
                    f"{b} {rc.get(key, '<absent>')!r}"
                )
    elif lc != rc:
        yield f"context: {a} {lc!r}, {b} {rc!r}"
    if left.get("history") != right.get("history"):
        yield f"history: {a} {left.get('history')}, {b} {right.get('history')}"

"""What `verify` compares row by row: each stored event, idempotency key, fact audit,
outbox message, timer row and audited rejection against what the replay of the
history gives, each difference in words (`verify` runs them; see its docstring for
what is compared and what cannot be)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.errors import evaluation_message
from statekit.engine.result import CLOCK_REQUIRED, Status
from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet, carry_over
from statekit.runner.errors import ChartVersionError
from statekit.runner.evidence import EvidenceFormError, evidence_data
from statekit.runner.family_told import family_told
from statekit.runner.hashes import encode_payload
from statekit.runner.identifier_bounds import key_refusal
from statekit.runner.json_text import parse_json
from statekit.runner.keys import idempotency_key
from statekit.runner.outcome import BUSINESS_KEY_CONFLICT, DUPLICATE_FACT, KEY_TOO_LONG
from statekit.runner.pruned_start import is_thinned
from statekit.runner.store.rows import EventRow, OutboxRow, RejectionRow, TimerRow

STATUSES = ("pending", "delivered", "dead")
_RACE_KEYS = {"reason", "expected_version", "version", "event_id", "sequence"}
_FACT_AUDITS = {
    ("ALREADY_APPLIED", DUPLICATE_FACT),
    ("CONFLICT", BUSINESS_KEY_CONFLICT),
}


def event_differences(event: EventRow, replayed_evidence: str | None) -> Iterator[str]:
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


def key_differences(
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


def fact_differences(
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


def outbox_differences(
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


def timer_differences(expected: list[TimerRow], stored: list[TimerRow]) -> Iterator[str]:
    """The stored timer rows against the replayed state's armed timers, column by column."""
    wanted = {t.timer_id: t for t in expected}
    for row in stored:
        where = f"statekit_timers: timer {row.timer_id!r}"
        truth = wanted.pop(row.timer_id, None) if isinstance(row.timer_id, str) else None
        if truth is None:
            yield f"{where} (generation {row.generation!r}) is stored, the replay has no such timer"
            continue
        for name in ("generation", "event", "payload", "due_ms", "sequence", "record"):
            have, want = getattr(row, name), getattr(truth, name)
            if type(have) is not type(want) or have != want:
                yield f"{where}: {name}: stored {have!r}, replayed {want!r}"
    for timer_id, truth in wanted.items():
        yield (
            f"statekit_timers: timer {timer_id!r} (generation {truth.generation}, due "
            f"{truth.due_ms}) is armed in the replay, the store has no row of it"
        )


def delivery_differences(row: OutboxRow) -> Iterator[str]:
    """A message's delivery state against itself (nothing replays a delivery)."""
    where = f"outbox: message {row.message_id}"
    if row.status not in STATUSES:
        yield f"{where}: status {row.status!r} is not one of {', '.join(STATUSES)}"
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


FAMILY_REFUSALS = frozenset({"INVOCATION_CANCELLED", "FAMILY_BOUND", "FAMILY_EVENT"})
"""The reasons a family step refuses an event before the chart sees it
(`runner.family_step`): no replay of the chart gives them."""


def rejection_differences(
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
    if row.status == "REJECTED" and row.reason in FAMILY_REFUSALS:
        return  # refused by a family step from its links: `family_verify` checks them
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
                told = family_told(chart, row.instance_id, row.event_id, row.type, payload)
                result = chart.send(
                    moved, row.type, told, event_id=row.event_id, instance_id=row.instance_id
                )
                got = (result.status, result.reason, result.message)
                if result.reason == CLOCK_REQUIRED and row.reason != CLOCK_REQUIRED:
                    return  # decided by `now`: a rejection row keeps no clock reading to replay
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
        yield from fact_differences(row, detail, charts, events)
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


def _moved(state: State, chart: Chart) -> State:
    try:
        return carry_over(state, chart)
    except ChartVersionError as exc:
        raise ValueError(str(exc)) from exc

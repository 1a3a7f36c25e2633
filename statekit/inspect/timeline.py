"""An instance's timeline: its stored history and audited rejections, merged in the order
they happened, each entry classified.

What the store records of an instance, and so what a timeline shows:

- each accepted event (`statekit_events`): `applied`, `already-applied` (an
  accepted event that changed nothing, by an `already` entry or a repeated
  fact), a timer delivery (`timer`: its event ID names the timer and
  generation; `timer-rejected` when the chart rejected it, which consumed the
  timer), an event the chart sent itself (`sent`: an undelayed `send`), and a
  migration to a newer chart version (`migration`);
- each audited rejection (`statekit_rejections`): `rejected` with its reason and
  message, and `conflict` (a history conflict such as an event ID sent again
  with another payload, or a fact repeated under a new ID with another
  payload), with the version the instance was at.

A rejection recorded at version v happened after the event of sequence v and
before the next one, so the merge is by (version, accepted event first, row key).

What the store does not record, so no timeline can show: a redelivery of an
event ID already in the history (answered ALREADY_APPLIED from that row), an
`expected_version` conflict (answered, not written), a gap or an old sequence,
and the events before the snapshot retention thinned the history to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statekit.runner.errors import CorruptRowError
from statekit.runner.evidence import stored_evidence
from statekit.runner.migration import is_migration
from statekit.runner.store.rows import EventRow, RejectionRow
from statekit.runner.stored_state import loads
from statekit.runner.timers import SEND_PREFIX, parse_timer_event_id

APPLIED = "applied"
ALREADY_APPLIED = "already-applied"
TIMER = "timer"
TIMER_REJECTED = "timer-rejected"
SENT = "sent"
MIGRATION = "migration"
REJECTED = "rejected"
CONFLICT = "conflict"
KINDS = (APPLIED, ALREADY_APPLIED, TIMER, TIMER_REJECTED, SENT, MIGRATION, REJECTED, CONFLICT)
"""Every kind of entry, in the order the legend lists them."""

NOT_RECORDED = (
    "redeliveries of an event ID already in the history (answered ALREADY_APPLIED "
    "from that row), expected_version conflicts, sequence gaps and old sequences are "
    "answered but not written to the store, so they are not on the timeline"
)
"""What a timeline cannot show, in words for the page."""


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One entry: its position on the timeline (`step`, from 1), its kind (`KINDS`), the
    event ID and type, the instance version after it (`version`: the sequence of an
    accepted event, the version a rejection left unchanged), whether it is an accepted
    history row (`sequence` is then its sequence, else None), its status, reason and
    message (rejections, rejected timer deliveries), the chart version it was decided
    under (None for a rejection: the instance's then), its wall-clock time, and the
    stored texts of its payload and evidence (None: a rejection has none), read only
    when asked for (`payload`, `evidence`, `problem`): a page shows one step's, and a
    long history would otherwise cost a parse of every row per page."""

    step: int
    kind: str
    event_id: str
    type: str
    version: int
    sequence: int | None
    status: str
    reason: str | None
    message: str | None
    chart_version: int | None
    recorded_at: float
    payload_text: str
    evidence_text: str | None = None

    @property
    def accepted(self) -> bool:
        """Whether this is an entry of the history (it may have changed the state)."""
        return self.sequence is not None

    @property
    def payload(self) -> Any:
        """The payload, parsed (None when the stored text is damaged: `problem` says why)."""
        try:
            return loads(self.payload_text, "its payload")
        except CorruptRowError:
            return None

    @property
    def evidence(self) -> dict[str, Any]:
        """The full form of the evidence of an accepted event ({} for a rejection, or a
        damaged text: `problem` says why)."""
        if self.evidence_text is None:
            return {}
        try:
            return stored_evidence(self.evidence_text, self.event_id, "its evidence")
        except CorruptRowError:
            return {}

    @property
    def problem(self) -> str | None:
        """Why the payload or evidence cannot be read (None: both can)."""
        problems = []
        try:
            loads(self.payload_text, "its payload")
        except CorruptRowError as exc:
            problems.append(str(exc))
        if self.evidence_text is not None:
            try:
                stored_evidence(self.evidence_text, self.event_id, "its evidence")
            except CorruptRowError as exc:
                problems.append(str(exc))
        return "; ".join(problems) or None


def event_kind(row: EventRow) -> str:
    """The kind of an accepted history row (see the module docstring)."""
    if is_migration(row.event_id, row.type):
        return MIGRATION
    if parse_timer_event_id(row.event_id) is not None:
        return TIMER_REJECTED if row.status == "REJECTED" else TIMER
    if row.status == "ALREADY_APPLIED":
        return ALREADY_APPLIED
    if row.event_id.startswith(SEND_PREFIX):
        return SENT
    return APPLIED


def build_timeline(
    events: Sequence[EventRow], rejections: Sequence[RejectionRow]
) -> tuple[TimelineEntry, ...]:
    """The instance's entries in the order they happened (see the module docstring)."""
    keyed: list[tuple[tuple[int, int, int], EventRow | RejectionRow]] = []
    for row in events:
        keyed.append(((_int(row.sequence), 0, 0), row))
    for index, rejection in enumerate(rejections):
        keyed.append(((_int(rejection.version), 1, _int(rejection.id, index)), rejection))
    keyed.sort(key=lambda pair: pair[0])
    return tuple(
        _event_entry(step, row) if isinstance(row, EventRow) else _rejection_entry(step, row)
        for step, (_key, row) in enumerate(keyed, start=1)
    )


def _event_entry(step: int, row: EventRow) -> TimelineEntry:
    kind = event_kind(row)
    reason = message = None
    if kind == TIMER_REJECTED:  # the chart's reason is in the evidence
        try:
            rejected = stored_evidence(row.evidence, row.event_id, "its evidence").get("rejected")
        except CorruptRowError:
            rejected = None
        if isinstance(rejected, dict):
            reason, message = _text(rejected.get("reason")), _text(rejected.get("message"))
    return TimelineEntry(
        step=step,
        kind=kind,
        event_id=row.event_id,
        type=row.type,
        version=_int(row.sequence),
        sequence=_int(row.sequence),
        status=row.status,
        reason=reason,
        message=message,
        chart_version=row.chart_version if type(row.chart_version) is int else None,
        recorded_at=_time(row.recorded_at),
        payload_text=row.payload,
        evidence_text=row.evidence,
    )


def _rejection_entry(step: int, row: RejectionRow) -> TimelineEntry:
    return TimelineEntry(
        step=step,
        kind=REJECTED if row.status == "REJECTED" else CONFLICT,
        event_id=row.event_id,
        type=row.type,
        version=_int(row.version),
        sequence=None,
        status=row.status,
        reason=_text(row.reason),
        message=_text(row.message),
        chart_version=None,
        recorded_at=_time(row.recorded_at),
        payload_text=row.payload,
    )


def _int(value: object, default: int = 0) -> int:
    """A stored integer, `default` for a damaged one (it sorts first rather than failing)."""
    return value if type(value) is int else default


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _time(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0

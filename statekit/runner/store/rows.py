"""The stored forms of the runner's tables, as frozen records (JSON columns still as text).

A record read back from a table has that table's columns in order (the store
derives its column lists from these fields; `EventRow.payload_digest`, last,
is the one field that is not a column), so the SQL and the record cannot
disagree; records written by the runner are built with keywords.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from statekit.engine.record_makers import maker

T = TypeVar("T")

STORED_INT_MIN, STORED_INT_MAX = -(2**63), 2**63 - 1
"""The range of every integer a store holds (versions, sequences, chart versions,
attempts): signed 64-bit, the columns' type in both dialects."""


def stored_int_problem(value: int, what: str) -> str | None:
    """Why `value` cannot be stored (outside `STORED_INT_MIN`..`STORED_INT_MAX`), or None."""
    if STORED_INT_MIN <= value <= STORED_INT_MAX:
        return None
    return f"{what} {value} is outside the range a store holds (-2**63 to 2**63-1)"


def positional(cls: type[T], *names: str) -> Callable[..., T]:
    """`record_makers.maker(cls)`: a fast constructor taking the fields `names` in this
    order (the rest take their defaults), for records built once per event. TypeError,
    when the module defining it is imported, if `names` are not the first fields of
    `cls`: a positional call must never follow a reordered record."""
    fields = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    if fields[: len(names)] != names:
        raise TypeError(f"{cls.__name__} has the fields {fields}, not {names} first")
    return maker(cls)


@dataclass(frozen=True, slots=True)
class ChartKey:
    """The chart version an instance runs on: its name, version and digest."""

    name: str
    version: int
    digest: str


@dataclass(frozen=True, slots=True)
class ChartRow:
    """A chart version known to the store (its YAML source when it was available)."""

    digest: str
    name: str
    version: int
    source: str | None


@dataclass(frozen=True, slots=True)
class StateColumns:
    """A state as the instance row stores it: three canonical JSON texts, and a fourth,
    `timers` (the armed timers and the arming counter), None while the instance never
    armed one."""

    configuration: str
    context: str
    history: str
    timers: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedId:
    """Where an event ID is recorded in a history: its sequence, payload sha256 and status."""

    sequence: int
    payload_sha256: str
    status: str


@dataclass(frozen=True, slots=True)
class RecordedKey:
    """The accepted event holding an idempotency key: its sequence, event ID and payload
    sha256."""

    sequence: int
    event_id: str
    payload_sha256: str


@dataclass(frozen=True, slots=True)
class InstanceRow:
    """An instance row as read from the store; `recorded` is where the event ID being
    applied is recorded, when one was looked up and found."""

    instance_id: str
    chart_name: str
    chart_version: int
    chart_digest: str
    version: int
    columns: StateColumns
    initial_context: str
    recorded: RecordedId | None = None
    start_clock_ms: int | None = None


@dataclass(frozen=True, slots=True)
class InstanceChart:
    """An instance ID with the name and version of the chart it runs on."""

    instance_id: str
    chart_name: str
    chart_version: int


@dataclass(frozen=True, slots=True)
class EventRow:
    """One entry of an instance's history: an accepted event, or a timer delivery the chart
    rejected (status `REJECTED`: it consumed the timer); `idempotency_key` is its
    business key (`statekit.runner.keys`), None when its event declares none;
    `clock_ms` the commit clock's reading its due times were computed from (None in
    rows written before the store had timers)."""

    instance_id: str
    sequence: int
    event_id: str
    type: str
    payload: str
    payload_sha256: str
    status: str
    chart_version: int
    evidence: str
    recorded_at: float
    idempotency_key: str | None = None
    clock_ms: int | None = None
    payload_digest: bytes | None = field(default=None, compare=False, repr=False)
    """Not a column: the 32-byte sha256 of `[type, payload]` when whoever built the row
    hashed this very `type` and `payload` text for `payload_sha256` (the runner does), so
    that the store packs it without hashing again (`store.packing.pack_hex_hash`); None
    otherwise, and in rows read back."""


@dataclass(frozen=True, slots=True)
class TimerRow:
    """One armed timer of an instance (`statekit.runner.timers`): the event and payload
    (canonical JSON) it delivers, its due time in epoch milliseconds, the generation
    that armed it and the sequence of the event that did (0: the creation); `record`, the
    armed timer itself as canonical JSON (`ArmedTimer.to_data()`): the rows of an instance
    are its armed timers (None only in a row written without one, which no state reads)."""

    instance_id: str
    timer_id: str
    generation: int
    event: str
    payload: str
    due_ms: int
    sequence: int
    record: str | None = None


@dataclass(frozen=True, slots=True)
class RejectionRow:
    """One audited rejection or history conflict (nothing changed); `id` is the row's
    key, None before it is inserted."""

    instance_id: str
    event_id: str
    type: str
    payload: str
    payload_sha256: str
    status: str
    reason: str
    message: str | None
    version: int
    detail: str
    recorded_at: float
    id: int | None = None


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    """A stored snapshot: the state after `through_sequence` events."""

    instance_id: str
    through_sequence: int
    state: str
    state_sha256: str
    chart_digest: str
    chart_version: int
    engine_version: str
    created_at: float


@dataclass(frozen=True, slots=True)
class NewOutboxRow:
    """A message to put in the outbox (pending, never attempted yet)."""

    instance_id: str
    message_id: str
    sequence: int
    type: str
    payload: str
    created_at: float


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """An outbox message with its delivery state (`pending`, `delivered`, `dead`)."""

    id: int
    instance_id: str
    message_id: str
    sequence: int
    type: str
    payload: str
    status: str
    attempts: int
    next_attempt_at: float
    last_error: str | None
    created_at: float
    delivered_at: float | None


@dataclass(frozen=True, slots=True)
class InstanceMove:
    """An instance row to move from the version it was read at to `new_version`, only if
    it is still at `read_version` (the optimistic check), with its chart and state;
    `read`: the row the decision assumed when it was not read in this transaction (a
    cached one), whose chart and state texts the update also checks; `before`: the row
    as the decision found it (read or cached), so that the update sets only the
    columns that differ from it (None: all of them)."""

    instance_id: str
    read_version: int
    new_version: int
    chart: ChartKey
    columns: StateColumns
    now: float
    read: InstanceRow | None = None
    before: InstanceRow | None = None


@dataclass(frozen=True, slots=True)
class DecidedRows:
    """Everything one write transaction decided (one event, one instance's batch), to be
    written together by `Store.write_decided`: the timer rows removed
    (`(instance ID, timer ID)`) and armed, the history entries, the instance moves,
    the outbox messages, the audited rejections and the snapshots."""

    timers_deleted: tuple[tuple[str, str], ...] = ()
    timers_inserted: tuple[TimerRow, ...] = ()
    events: tuple[EventRow, ...] = ()
    moves: tuple[InstanceMove, ...] = ()
    outbox: tuple[NewOutboxRow, ...] = ()
    rejections: tuple[RejectionRow, ...] = ()
    snapshots: tuple[SnapshotRow, ...] = ()

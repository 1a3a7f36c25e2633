"""The SQL both dialects share for the runner's tables, and the records turned into
statement parameters and back.

The column lists come from the records of `rows` (a table's columns are its
record's fields, in order), so a statement and the record it reads or writes
cannot disagree. `Store` (`base`) runs these statements; a dialect converts
the `?` placeholders where it must (PostgreSQL) and may send several as one
query (`PostgresStore.write_decided` sends `move_values` and
`decided_statements` together). Hashes and evidence are packed on the way in
and unpacked on the way out (`packing`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any

from statekit.runner.store.migrations_v3_v6 import EVENT_TIME
from statekit.runner.store.packing import (
    pack_evidence,
    pack_hex_hash,
    pack_status,
    unpack_evidence,
    unpack_hash,
    unpack_status,
)
from statekit.runner.store.rows import (
    ChartKey,
    DecidedRows,
    EventRow,
    InstanceMove,
    NewOutboxRow,
    OutboxRow,
    RejectionRow,
    SnapshotRow,
    StateColumns,
    TimerRow,
)


def _names(record: type[Any], *, without: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The columns of a table, in the order of its record's fields."""
    return tuple(f.name for f in fields(record) if f.name not in without)


_EVENT = _names(EventRow, without=("payload_digest",))  # its one field that is no column
_REJECTION_INSERT = _names(RejectionRow, without=("id",))
_REJECTION = ("id", *_REJECTION_INSERT)
_SNAPSHOT = _names(SnapshotRow)
_NEW_OUTBOX = _names(NewOutboxRow)
_OUTBOX = _names(OutboxRow)
_TIMER = _names(TimerRow)
_HASH = _EVENT.index("payload_sha256")
_EVIDENCE = _EVENT.index("evidence")
_TYPE = _EVENT.index("type")
_PAYLOAD = _EVENT.index("payload")
_STATUS = _EVENT.index("status")


def _written_in_order(record: type[Any], columns: tuple[str, ...], *order: str) -> None:
    """TypeError, when this module is imported, unless `record`'s columns are `order`:
    `event_values` and `_outbox_values` name them in that order (a tuple built at once,
    once per row written), and a reordered record must not be written column-shifted."""
    if columns != order:
        raise TypeError(f"{record.__name__} has the columns {columns}, not {order}")


_written_in_order(
    EventRow, _EVENT, "instance_id", "sequence", "event_id", "type", "payload",
    "payload_sha256", "status", "chart_version", "evidence", "recorded_at", "idempotency_key",
    "clock_ms",
)  # fmt: skip
_written_in_order(
    NewOutboxRow, _NEW_OUTBOX, "instance_id", "message_id", "sequence", "type", "payload",
    "created_at",
)  # fmt: skip


def event_values(row: EventRow) -> tuple[Any, ...]:
    """An event row's column values, its payload hash, evidence and status packed
    (`packing`)."""
    event_type, payload = row.type, row.payload
    return (
        row.instance_id,
        row.sequence,
        row.event_id,
        event_type,
        payload,
        pack_hex_hash(event_type, payload, row.payload_sha256, row.payload_digest),
        pack_status(row.status),
        row.chart_version,
        pack_evidence(event_type, payload, row.evidence),
        row.recorded_at,
        row.idempotency_key,
        row.clock_ms,
    )


def event_row(row: Sequence[Any]) -> EventRow:
    """An event row selected as `_EVENT`, its hash and evidence unpacked."""
    values = list(row)
    values[_HASH] = unpack_hash(values[_TYPE], values[_PAYLOAD], values[_HASH])
    values[_EVIDENCE] = unpack_evidence(values[_TYPE], values[_PAYLOAD], values[_EVIDENCE])
    values[_STATUS] = unpack_status(values[_STATUS])
    return EventRow(*values)


rejection_values = attrgetter(*_REJECTION_INSERT)
snapshot_values = attrgetter(*_SNAPSHOT)
new_outbox_values = attrgetter(*_NEW_OUTBOX)


def _outbox_values(row: NewOutboxRow, times: dict[tuple[str, int], float]) -> Sequence[Any]:
    """An outbox row's values, its `created_at` NULL when it is the `recorded_at` of its
    event, written with it (read back as the event's: see `OUTBOX_COLUMNS`)."""
    created: float | None = row.created_at
    if times.get((row.instance_id, row.sequence)) == created:
        created = None
    return (row.instance_id, row.message_id, row.sequence, row.type, row.payload, created)


timer_values = attrgetter(*_TIMER)


def _insert(table: str, names: tuple[str, ...]) -> str:
    """`INSERT INTO table (names…) VALUES (?, …)`."""
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"


INSERT_EVENT = _insert("statekit_events", _EVENT)
INSERT_REJECTION = _insert("statekit_rejections", _REJECTION_INSERT)
_INSERT_SNAPSHOT = _insert("statekit_snapshots", _SNAPSHOT)
INSERT_OUTBOX = _insert("statekit_outbox", _NEW_OUTBOX)
UPSERT_TIMER = _insert("statekit_timers", _TIMER) + (
    " ON CONFLICT (instance_id, timer_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _TIMER[2:])
)
UPSERT_SNAPSHOT = (
    f"{_INSERT_SNAPSHOT} ON CONFLICT (instance_id, through_sequence) "
    "DO UPDATE SET state = excluded.state, "
    "state_sha256 = excluded.state_sha256, chart_digest = excluded.chart_digest, "
    "chart_version = excluded.chart_version, engine_version = excluded.engine_version, "
    "created_at = excluded.created_at"
)
DELETE_TIMER = "DELETE FROM statekit_timers WHERE instance_id = ? AND timer_id = ?"
TIMER_COLUMNS = ", ".join(f"t.{name}" for name in _TIMER)
EVENT_COLUMNS = ", ".join(_EVENT)
REJECTION_COLUMNS = ", ".join(_REJECTION)
SNAPSHOT_COLUMNS = ", ".join(_SNAPSHOT)
# an outbox row without a time of its own was created with its event (schema 6)
OUTBOX_COLUMNS = ", ".join(
    f"COALESCE(o.created_at, {EVENT_TIME})" if name == "created_at" else f"o.{name}"
    for name in _OUTBOX
)


def rejection_row(row: Sequence[Any]) -> RejectionRow:
    """A rejection row selected as `_REJECTION` (its key first)."""
    return RejectionRow(**dict(zip(_REJECTION, row, strict=True)))


_INSTANCE_COLUMNS = (
    "i.instance_id, i.chart_name, i.chart_version, i.chart_digest, i.version, "
    "i.configuration, i.context, i.history, i.initial_context, i.timers, i.start_clock_ms"
)
INSTANCE_WIDTH = 11
"""How many columns of `SELECT_INSTANCE` are the instance's (the record's follow)."""
_RECORD_COLUMNS = "sequence, payload_sha256, status, type, payload"
SELECT_INSTANCE = (
    f"SELECT {_INSTANCE_COLUMNS}, {', '.join('e.' + c for c in _RECORD_COLUMNS.split(', '))} "
    "FROM statekit_instances i "
    "LEFT JOIN statekit_events e ON e.instance_id = i.instance_id AND e.event_id = ? "
    "WHERE i.instance_id = ?"
)
"""The instance row and the record of an event ID in one statement: the joined record is
read in the statement's snapshot, so a locked read that waited for the row must not rely
on it where the dialect re-reads only the locked row after the wait (PostgreSQL's READ
COMMITTED): there `SELECT_LOCKED_INSTANCE` then `SELECT_RECORDED`, two statements."""
SELECT_LOCKED_INSTANCE = (
    f"SELECT {_INSTANCE_COLUMNS} FROM statekit_instances i WHERE i.instance_id = ?"
)
SELECT_RECORDED = (
    f"SELECT {_RECORD_COLUMNS} FROM statekit_events WHERE instance_id = ? AND event_id = ?"
)
"""Where an event ID is recorded (`RecordedId`'s columns, unpacked by `instance_row`)."""
PAIRS_PER_STATEMENT = 400  # two parameters each: within SQLite's oldest limit (999)
UPDATE_INSTANCE = (
    "UPDATE statekit_instances SET version = ?, chart_name = ?, chart_version = ?, "
    "chart_digest = ?, configuration = ?, context = ?, history = ?, timers = ?, "
    "updated_at = ? WHERE instance_id = ? AND version = ?"
)
# `timers` is NULL until a timer was armed, and its text is never empty.
_STATE_GUARD = (
    " AND configuration = ? AND context = ? AND history = ? "
    "AND COALESCE(timers, '') = COALESCE(?, '')"
)
UPDATE_READ_INSTANCE = f"{UPDATE_INSTANCE} AND chart_digest = ?{_STATE_GUARD}"
# A move decided on a row not read in its transaction (a cached one) checks every column
# the decision depended on: a row changed in place (its version kept) is never written
# over, and is read and decided again instead (`runner.row_cache`).
_READ_GUARD = f" AND chart_name = ? AND chart_version = ? AND chart_digest = ?{_STATE_GUARD}"
_SET_CHART, _SET_CONFIGURATION, _SET_CONTEXT, _SET_HISTORY, _SET_TIMERS = 1, 2, 4, 8, 16
_SET_COLUMNS = (
    (_SET_CHART, "chart_name = ?, chart_version = ?, chart_digest = ?"),
    (_SET_CONFIGURATION, "configuration = ?"),
    (_SET_CONTEXT, "context = ?"),
    (_SET_HISTORY, "history = ?"),
    (_SET_TIMERS, "timers = ?"),
)
_UPDATES: dict[int, str] = {}


def _update_setting(changed: int) -> str:
    """The version-checked instance update setting the version, the columns `changed`
    names (`_SET_*` flags, in this order) and the time: one text per combination, so
    that each dialect prepares it once."""
    sql = _UPDATES.get(changed)
    if sql is None:
        sets = ", ".join(["version = ?", *(text for flag, text in _SET_COLUMNS if changed & flag)])
        sql = _UPDATES[changed] = (
            f"UPDATE statekit_instances SET {sets}, updated_at = ? "
            "WHERE instance_id = ? AND version = ?"
        )
    return sql


_GUARDED: dict[str, str] = {}


def _guarded(update: str) -> str:
    """`update` with `_READ_GUARD`: one text object per update, so that the statement
    caches (SQLite's by text, PostgreSQL's conversions) find it without hashing a new
    string of 400 characters for every event."""
    sql = _GUARDED.get(update)
    if sql is None:
        sql = _GUARDED[update] = f"{update}{_READ_GUARD}"
    return sql


# An outbox message is deliverable when it is pending, due, unclaimed (or its claim
# expired) and no earlier message of its instance is still pending: per-instance order.
ELIGIBLE = (
    "o.status = 'pending' AND o.next_attempt_at <= ? "
    "AND (o.claimed_until IS NULL OR o.claimed_until < ?) "
    "AND NOT EXISTS (SELECT 1 FROM statekit_outbox p WHERE p.instance_id = o.instance_id "
    "AND p.status = 'pending' AND p.id < o.id)"
)


def chart_values(chart: ChartKey) -> tuple[str, int, str]:
    return (chart.name, chart.version, chart.digest)


def state_values(columns: StateColumns) -> tuple[str, str, str, str | None]:
    return (columns.configuration, columns.context, columns.history, columns.timers)


def decided_statements(rows: DecidedRows) -> Iterator[tuple[str, list[Sequence[Any]]]]:
    """The statements after the instance moves (timer rows, history entries, outbox,
    audit rows, snapshots), each with its parameter rows."""
    if rows.timers_deleted:
        yield DELETE_TIMER, list(rows.timers_deleted)
    if rows.timers_inserted:
        yield UPSERT_TIMER, [timer_values(r) for r in rows.timers_inserted]
    if rows.events:
        yield INSERT_EVENT, [event_values(r) for r in rows.events]
    if rows.outbox:
        times = {(e.instance_id, e.sequence): e.recorded_at for e in rows.events}
        yield INSERT_OUTBOX, [_outbox_values(r, times) for r in rows.outbox]
    if rows.rejections:
        yield INSERT_REJECTION, [rejection_values(r) for r in rows.rejections]
    if rows.snapshots:
        yield UPSERT_SNAPSHOT, [snapshot_values(r) for r in rows.snapshots]


def move_values(move: InstanceMove) -> tuple[str, tuple[Any, ...]]:
    """The statement and parameters of one instance move: the version check, with
    `move.read` also the chart and state texts of the row assumed; given
    `move.before`, it sets only the columns that differ from that row's (and the
    version and time), since the row is written whole anyway and every parameter
    is bound and compared in Python (usually the context alone moved)."""
    before = move.before
    chart, columns = move.chart, move.columns
    if before is None:
        sql = UPDATE_INSTANCE
        params: tuple[Any, ...] = (
            move.new_version, *chart_values(chart), *state_values(columns), move.now,
            move.instance_id, move.read_version,
        )  # fmt: skip
    else:
        held = before.columns
        values: list[Any] = [move.new_version]
        changed = 0
        if (
            chart.digest != before.chart_digest
            or chart.name != before.chart_name
            or chart.version != before.chart_version
        ):
            changed = _SET_CHART
            values.extend(chart_values(chart))
        # in the order of `_SET_COLUMNS` (not a loop over tuples built for each event)
        if columns.configuration != held.configuration:
            changed |= _SET_CONFIGURATION
            values.append(columns.configuration)
        if columns.context != held.context:
            changed |= _SET_CONTEXT
            values.append(columns.context)
        if columns.history != held.history:
            changed |= _SET_HISTORY
            values.append(columns.history)
        if columns.timers != held.timers:
            changed |= _SET_TIMERS
            values.append(columns.timers)
        values += (move.now, move.instance_id, move.read_version)
        sql = _update_setting(changed)
        params = tuple(values)
    read = move.read
    if read is None:
        return sql, params
    return _guarded(sql), (
        *params, read.chart_name, read.chart_version, read.chart_digest,
        *state_values(read.columns),
    )  # fmt: skip

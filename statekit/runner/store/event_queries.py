"""The history: event rows (inserted, looked up by event ID, idempotency key or sequence,
read in order), the audited rejections and the snapshots.
"""

from __future__ import annotations

from collections.abc import Sequence

from statekit.runner.store.packing import unpack_hash, unpack_status
from statekit.runner.store.rows import (
    EventRow,
    RecordedId,
    RecordedKey,
    RejectionRow,
    SnapshotRow,
)
from statekit.runner.store.sql_access import SqlAccess
from statekit.runner.store.statements import (
    EVENT_COLUMNS,
    INSERT_EVENT,
    INSERT_REJECTION,
    PAIRS_PER_STATEMENT,
    REJECTION_COLUMNS,
    SELECT_RECORDED,
    SNAPSHOT_COLUMNS,
    UPSERT_SNAPSHOT,
    event_row,
    event_values,
    rejection_row,
    rejection_values,
    snapshot_values,
)


class EventQueries(SqlAccess):
    """A `Store`'s events, rejections and snapshots."""

    __slots__ = ()

    # ---- events ------------------------------------------------------------------------
    def insert_events(self, rows: Sequence[EventRow]) -> None:
        """Record accepted events (the primary key, the unique event ID and the unique
        idempotency key are the database's last word against a duplicate)."""
        self.executemany(
            INSERT_EVENT,
            [event_values(r) for r in rows],
        )

    def recorded_event(self, instance_id: str, event_id: str) -> RecordedId | None:
        """Where the event ID is recorded in the instance's history, if it is."""
        row = self.execute(SELECT_RECORDED, (instance_id, event_id)).fetchone()
        if row is None:
            return None
        return RecordedId(
            sequence=int(row[0]),
            payload_sha256=unpack_hash(row[3], row[4], row[1]),
            status=str(unpack_status(row[2])),
        )

    def recorded_events(
        self, pairs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], RecordedId]:
        """Where each (instance ID, event ID) of `pairs` is recorded, for those that are:
        `recorded_event` of many events in a few statements (a batch's lookups)."""
        found: dict[tuple[str, str], RecordedId] = {}
        unique = list(dict.fromkeys(pairs))
        for start in range(0, len(unique), PAIRS_PER_STATEMENT):
            chunk = unique[start : start + PAIRS_PER_STATEMENT]
            rows = self.execute(
                "SELECT instance_id, event_id, sequence, payload_sha256, status, type, payload "
                "FROM statekit_events WHERE (instance_id, event_id) IN "
                f"(VALUES {', '.join('(?, ?)' for _ in chunk)})",
                [value for pair in chunk for value in pair],
            ).fetchall()
            for r in rows:
                found[(r[0], r[1])] = RecordedId(
                    sequence=int(r[2]),
                    payload_sha256=unpack_hash(r[5], r[6], r[3]),
                    status=str(unpack_status(r[4])),
                )
        return found

    def recorded_key(self, instance_id: str, event_type: str, key: str) -> RecordedKey | None:
        """The accepted event of `event_type` holding idempotency key `key`, if any."""
        row = self.execute(
            "SELECT sequence, event_id, payload_sha256, payload FROM statekit_events "
            "WHERE instance_id = ? AND type = ? AND idempotency_key = ?",
            (instance_id, event_type, key),
        ).fetchone()
        if row is None:
            return None
        return RecordedKey(
            sequence=int(row[0]),
            event_id=str(row[1]),
            payload_sha256=unpack_hash(event_type, row[3], row[2]),
        )

    def event_id_at(self, instance_id: str, sequence: int) -> str | None:
        """The event ID recorded at `sequence`, if any."""
        row = self.execute(
            "SELECT event_id FROM statekit_events WHERE instance_id = ? AND sequence = ?",
            (instance_id, sequence),
        ).fetchone()
        return None if row is None else str(row[0])

    def events(self, instance_id: str, after: int = 0) -> list[EventRow]:
        """The history after sequence `after`, in order."""
        rows = self.execute(
            f"SELECT {EVENT_COLUMNS} FROM statekit_events WHERE instance_id = ? "
            "AND sequence > ? ORDER BY sequence",
            (instance_id, after),
        ).fetchall()
        return [event_row(r) for r in rows]  # selected in the record's field order

    def last_clock_ms(self, instance_id: str) -> int | None:
        """The clock reading of the instance's last recorded event that has one (None:
        none has, or its history was pruned past it)."""
        row = self.execute(
            "SELECT clock_ms FROM statekit_events WHERE instance_id = ? "
            "AND clock_ms IS NOT NULL ORDER BY sequence DESC LIMIT 1",
            (instance_id,),
        ).fetchone()
        return None if row is None else int(row[0])

    # ---- rejections --------------------------------------------------------------------
    def insert_rejection(self, row: RejectionRow) -> None:
        """Audit a rejection or a history conflict (`row.id` is ignored: the database
        numbers the rows)."""
        self.execute(
            INSERT_REJECTION,
            rejection_values(row),
        )

    def rejections(self, instance_id: str | None = None) -> list[RejectionRow]:
        """Audited rejections, oldest first (of one instance, or all)."""
        sql = f"SELECT {REJECTION_COLUMNS} FROM statekit_rejections"
        if instance_id is None:
            rows = self.execute(sql + " ORDER BY id").fetchall()
        else:
            rows = self.execute(sql + " WHERE instance_id = ? ORDER BY id", (instance_id,))
            rows = rows.fetchall()
        return [rejection_row(r) for r in rows]

    # ---- snapshots ---------------------------------------------------------------------
    def insert_snapshot(self, row: SnapshotRow) -> None:
        """Store (or replace) the snapshot of an instance at `through_sequence`."""
        self.execute(UPSERT_SNAPSHOT, snapshot_values(row))

    def snapshots(self, instance_id: str) -> list[SnapshotRow]:
        """The snapshots of an instance, newest first."""
        rows = self.execute(
            f"SELECT {SNAPSHOT_COLUMNS} FROM statekit_snapshots WHERE instance_id = ? "
            "ORDER BY through_sequence DESC",
            (instance_id,),
        ).fetchall()
        return [SnapshotRow(*r) for r in rows]  # selected in the record's field order

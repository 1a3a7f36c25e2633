"""Instance rows: creating one, reading one (locked, with the record of an event ID), the
version-guarded move, and `write_decided`, which writes everything one transaction
decided (the move first) in as few round trips as the dialect allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statekit.runner.errors import CorruptRowError
from statekit.runner.store.packing import unpack_hash, unpack_status
from statekit.runner.store.rows import (
    ChartKey,
    DecidedRows,
    InstanceChart,
    InstanceRow,
    RecordedId,
    StateColumns,
)
from statekit.runner.store.sql_access import SqlAccess
from statekit.runner.store.statements import (
    INSTANCE_WIDTH,
    SELECT_INSTANCE,
    UPDATE_INSTANCE,
    UPDATE_READ_INSTANCE,
    chart_values,
    decided_statements,
    move_values,
    state_values,
)


class InstanceQueries(SqlAccess):
    """A `Store`'s instance rows and the write of one transaction's decisions."""

    __slots__ = ()

    # ---- instances ---------------------------------------------------------------------
    def insert_instance(
        self,
        instance_id: str,
        *,
        chart: ChartKey,
        columns: StateColumns,
        initial_context: str,
        now: float,
        start_clock_ms: int | None = None,
    ) -> bool:
        """Insert a version-0 instance (`start_clock_ms`: the clock reading its creation's
        due times came from); False when the ID is taken."""
        cursor = self.execute(
            "INSERT INTO statekit_instances (instance_id, chart_name, chart_version, "
            "chart_digest, version, configuration, context, history, timers, "
            "initial_context, created_at, updated_at, start_clock_ms) "
            "VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (instance_id) DO NOTHING",
            (
                instance_id,
                *chart_values(chart),
                *state_values(columns),
                initial_context,
                now,
                now,
                start_clock_ms,
            ),
        )
        return bool(cursor.rowcount == 1)

    def instance(
        self, instance_id: str, event_id: str | None = None, *, lock: bool = False
    ) -> InstanceRow | None:
        """The instance row, with the recorded event of `event_id` when there is one;
        `lock`: locked until the end of this write transaction where the dialect
        locks rows. The record is read as of the lock: where a locked read waits for
        the row, the record is read once the wait is over (`PostgresStore.instance`)."""
        sql = SELECT_INSTANCE + self.lock_clause if lock else SELECT_INSTANCE
        row = self.execute(sql, (event_id, instance_id)).fetchone()
        return None if row is None else instance_row(row, row[INSTANCE_WIDTH:])

    def update_instance(
        self,
        instance_id: str,
        *,
        read_version: int,
        new_version: int,
        chart: ChartKey,
        columns: StateColumns,
        now: float,
        read: InstanceRow | None = None,
    ) -> bool:
        """Move the instance to `new_version` only if it is still at `read_version` (and,
        given `read`, still holds that row's chart digest and state texts: a row the
        caller did not read in this transaction)."""
        params = (
            new_version, *chart_values(chart), *state_values(columns), now, instance_id,
            read_version,
        )  # fmt: skip
        if read is None:
            cursor = self.execute(UPDATE_INSTANCE, params)
        else:
            held = (read.chart_digest, *state_values(read.columns))
            cursor = self.execute(UPDATE_READ_INSTANCE, (*params, *held))
        return bool(cursor.rowcount == 1)

    # ---- one transaction's decisions, written together ----------------------------------
    def write_decided(self, rows: DecidedRows, *, last: bool = False) -> bool:
        """Write everything one transaction decided (timer rows, history entries, the
        version-checked instance moves, outbox, audit rows, snapshots) in as few round
        trips as the dialect allows; False when an instance was no longer at the version
        it was read at (the caller then rolls the transaction back and decides again).
        A row the database refuses (a duplicate event ID, business key or message ID)
        raises its error, and the caller's transaction (or savepoint) is rolled back.

        `last`: nothing else follows in this transaction, so the store may commit it
        with these writes (PostgreSQL sends the writes and the COMMIT as one query;
        a stale version then fails the whole query instead of committing); here the
        caller's `write()` block commits on exit as always."""
        for move in rows.moves:  # first: a writer that did not lock the row locks it here
            if self.execute(*move_values(move)).rowcount != 1:
                return False
        for sql, params in decided_statements(rows):
            self.executemany(sql, params)
        return True

    def instance_ids(self) -> list[str]:
        """Every instance ID, sorted."""
        rows = self.execute("SELECT instance_id FROM statekit_instances ORDER BY instance_id")
        return [r[0] for r in rows.fetchall()]

    def instance_charts(self) -> list[InstanceChart]:
        """Every instance with the name and version of its chart, sorted by instance ID."""
        rows = self.execute(
            "SELECT instance_id, chart_name, chart_version FROM statekit_instances "
            "ORDER BY instance_id"
        )
        return [
            InstanceChart(instance_id=r[0], chart_name=r[1], chart_version=r[2])
            for r in rows.fetchall()
        ]


def instance_row(row: Sequence[Any], recorded: Sequence[Any] | None) -> InstanceRow:
    """An instance row selected as `SELECT_LOCKED_INSTANCE` (the first `INSTANCE_WIDTH`
    columns of `SELECT_INSTANCE`), with `recorded` the record of the event ID asked
    about, selected as `SELECT_RECORDED` (None, or its columns None: not recorded)."""
    for name, value in (("version", row[4]), ("chart version", row[2])):
        if type(value) is not int:
            raise CorruptRowError(
                f"instance {row[0]!r}: the stored {name} {value!r} is not an integer"
            )
    columns = StateColumns(configuration=row[5], context=row[6], history=row[7], timers=row[9])
    found = (
        None
        if recorded is None or recorded[0] is None
        else RecordedId(
            sequence=recorded[0],
            payload_sha256=unpack_hash(recorded[3], recorded[4], recorded[1]),
            status=unpack_status(recorded[2]),
        )
    )
    return InstanceRow(
        instance_id=row[0],
        chart_name=row[1],
        chart_version=row[2],
        chart_digest=row[3],
        version=row[4],
        columns=columns,
        initial_context=row[8],
        recorded=found,
        start_clock_ms=row[10],
    )

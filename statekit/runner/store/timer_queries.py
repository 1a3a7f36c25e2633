"""Timer rows: written with the event that armed or removed them, claimed when due
(`claim_due_timers`, locking their instances where the dialect locks rows), and read
for a worker's sleep and for the rows no instance claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statekit.runner.store.rows import TimerRow
from statekit.runner.store.sql_access import SqlAccess
from statekit.runner.store.statements import (
    DELETE_TIMER,
    TIMER_COLUMNS,
    UPSERT_TIMER,
    timer_values,
)


class TimerQueries(SqlAccess):
    """A `Store`'s timer rows."""

    __slots__ = ()

    # ---- timers ------------------------------------------------------------------------
    def insert_timers(self, rows: Sequence[TimerRow]) -> None:
        """Record armed timers (the runner writes them in the transaction of the event that
        armed them); a row of the same `(instance_id, timer_id)` is replaced (a timer
        armed again: one statement instead of a delete and an insert)."""
        self.executemany(UPSERT_TIMER, [timer_values(r) for r in rows])

    def delete_timers(self, instance_id: str, timer_ids: Sequence[str]) -> None:
        """Remove the rows of timers the instance no longer has armed (cancelled, replaced
        or delivered), in the transaction of the event that did it."""
        self.executemany(DELETE_TIMER, [(instance_id, t) for t in timer_ids])

    def timers(self, instance_id: str | None = None) -> list[TimerRow]:
        """The armed timers (of one instance, or all), by due time then arming order."""
        sql = f"SELECT {TIMER_COLUMNS} FROM statekit_timers t"
        params: tuple[Any, ...] = ()
        if instance_id is not None:
            sql += " WHERE t.instance_id = ?"
            params = (instance_id,)
        rows = self.execute(sql + " ORDER BY t.due_ms, t.instance_id, t.generation", params)
        return [TimerRow(*r) for r in rows.fetchall()]  # selected in the record's field order

    def claim_due_timers(self, chart_name: str, now_ms: int, limit: int) -> list[TimerRow]:
        """Up to `limit` timers of instances of `chart_name` due at `now_ms`, earliest first
        (ties in arming order), inside the caller's write transaction; their instances
        stay locked until it ends where the dialect locks rows (`timer_lock_clause`:
        PostgreSQL skips instances another worker holds)."""
        rows = self.execute(
            f"SELECT {TIMER_COLUMNS} FROM statekit_timers t JOIN statekit_instances i "
            "ON i.instance_id = t.instance_id WHERE t.due_ms <= ? AND i.chart_name = ? "
            f"ORDER BY t.due_ms, t.generation LIMIT ?{self.timer_lock_clause}",
            (now_ms, chart_name, limit),
        ).fetchall()
        return [TimerRow(*r) for r in rows]

    def unclaimable_timers(self, now_ms: int, window: int) -> list[TimerRow]:
        """Timer rows due at `now_ms` whose instance the store does not have (never claimed:
        `claim_due_timers` joins the instance), among the `window` earliest due rows: one
        query whose work is bounded by `window` whatever the number of armed timers (the
        due-time index gives the earliest rows; nothing due, nothing read)."""
        rows = self.execute(
            f"SELECT {TIMER_COLUMNS} FROM (SELECT * FROM statekit_timers WHERE due_ms <= ? "
            "ORDER BY due_ms, generation LIMIT ?) t WHERE NOT EXISTS (SELECT 1 FROM "
            "statekit_instances i WHERE i.instance_id = t.instance_id) "
            "ORDER BY t.due_ms, t.generation",
            (now_ms, window),
        ).fetchall()
        return [TimerRow(*r) for r in rows]  # selected in the record's field order

    def upcoming_timers(self, chart_names: Sequence[str], limit: int) -> list[TimerRow]:
        """The `limit` earliest timers of instances of these charts, due or not (a worker
        sleeps until the first it can fire); reads, locks nothing."""
        marks = ", ".join("?" for _ in chart_names)
        rows = self.execute(
            f"SELECT {TIMER_COLUMNS} FROM statekit_timers t JOIN statekit_instances i ON "
            f"i.instance_id = t.instance_id WHERE i.chart_name IN ({marks}) "
            "ORDER BY t.due_ms, t.generation LIMIT ?",
            [*chart_names, limit],
        ).fetchall()
        return [TimerRow(*r) for r in rows]

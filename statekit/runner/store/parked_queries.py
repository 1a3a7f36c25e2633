"""The instances whose last history entry is a consumed timer delivery: where
`statekit timers` finds the timers a worker parked (`runner.loop_parking`) or a poison
delivery consumed (`KEY_TOO_LONG`), which no row of `statekit_timers` holds any more.

One query that reads each instance's row and, by its primary key, the one history entry
at the instance's version: its work grows with the number of instances (as listing the
armed timers grows with theirs); the length of the histories adds only what a deeper
index costs a lookup (`bench/parked_listing.py`).
"""

from __future__ import annotations

from statekit.runner.store.rows import EventRow
from statekit.runner.store.sql_access import SqlAccess
from statekit.runner.store.statements import EVENT_COLUMNS, event_row

_COLUMNS = ", ".join(f"e.{name.strip()}" for name in EVENT_COLUMNS.split(","))


def last_rejected_deliveries(store: SqlAccess, timer_prefix: str) -> list[EventRow]:
    """Every instance's last history entry when it is a timer delivery (its event ID
    starts with `timer_prefix`) recorded as REJECTED (it consumed its timer), by
    instance ID; inside the caller's transaction."""
    rows = store.execute(
        f"SELECT {_COLUMNS} FROM statekit_instances i {_LAST_ENTRY[store.dialect]} "
        "WHERE e.status = 'REJECTED' AND e.event_id LIKE ? ORDER BY e.instance_id",
        (f"{timer_prefix}%",),
    ).fetchall()
    return [event_row(r) for r in rows]  # selected in the record's field order


_LAST_ENTRY = {
    # SQLite: the left table of a CROSS JOIN is always the outer loop (else it scans
    # the events and looks each instance up)
    "sqlite": "CROSS JOIN statekit_events e ON e.instance_id = i.instance_id "
    "AND e.sequence = i.version",
    # PostgreSQL: a lateral subquery with a LIMIT is not pulled up into a join the
    # planner could turn around: one primary-key lookup per instance
    "postgresql": "CROSS JOIN LATERAL (SELECT * FROM statekit_events e0 WHERE "
    "e0.instance_id = i.instance_id AND e0.sequence = i.version LIMIT 1) e",
}
"""How each dialect joins an instance's row to its last history entry, as `e`."""

"""The instances whose last history entry is a consumed timer delivery: where
`statekit timers` finds the timers a worker parked (`runner.loop_parking`) or a poison
delivery consumed (`KEY_TOO_LONG`), which no row of `statekit_timers` holds any more.

One query that reads each instance's row and, by its primary key, the one history entry
at the instance's version: its work grows with the number of instances (as listing the
armed timers grows with theirs), never with the length of a history.
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
        f"SELECT {_COLUMNS} FROM statekit_instances i JOIN statekit_events e "
        "ON e.instance_id = i.instance_id AND e.sequence = i.version "
        "WHERE e.status = 'REJECTED' AND e.event_id LIKE ? ORDER BY e.instance_id",
        (f"{timer_prefix}%",),
    ).fetchall()
    return [event_row(r) for r in rows]  # selected in the record's field order

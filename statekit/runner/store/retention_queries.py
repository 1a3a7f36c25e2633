"""The SQL of retention (`statekit.runner.retention`): what may go, batch by batch.

Every function runs inside the caller's transaction (`Store.write()` or
`Store.read()`) and touches at most `limit` rows, so that one batch is one
short transaction: a writer waits for at most one batch (SQLite's one write
lock), or for nothing (PostgreSQL: a batch locks only the rows it removes or
thins, never an instance row). Both dialects take the same text (`?`
placeholders).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from statekit.runner.store.base import Store
from statekit.runner.store.packing import unpack_hash

THINNED = ""
"""The payload and evidence of an event row thinned by retention (no JSON text is
empty, so no reader can mistake it for a payload)."""

# A delivered message may go once it is old enough and no earlier message of its instance
# is still pending (so what is gone of an instance is always before what is pending).
_PRUNABLE_OUTBOX = (
    "FROM statekit_outbox o WHERE o.status = 'delivered' AND o.delivered_at < ? "
    "AND NOT EXISTS (SELECT 1 FROM statekit_outbox p WHERE p.instance_id = o.instance_id "
    "AND p.status = 'pending' AND p.id < o.id)"
)
_OLD_INBOX = "FROM statekit_inbox WHERE processed_at < ?"
_OLD_REJECTIONS = "FROM statekit_rejections WHERE recorded_at < ?"
_UNTHINNED = (
    "FROM statekit_events WHERE instance_id = ? AND sequence > ? AND sequence <= ? "
    f"AND payload <> '{THINNED}'"
)


def _raise_watermark(column: str) -> str:
    """Upsert of one instance's watermark `column`, which only ever rises."""
    return (
        f"INSERT INTO statekit_retention (instance_id, {column}, pruned_at) VALUES (?, ?, ?) "
        f"ON CONFLICT (instance_id) DO UPDATE SET {column} = CASE WHEN "
        f"excluded.{column} > statekit_retention.{column} THEN excluded.{column} "
        f"ELSE statekit_retention.{column} END, pruned_at = excluded.pruned_at"
    )


_RAISE_OUTBOX = _raise_watermark("outbox_through")
_RAISE_EVENTS = _raise_watermark("events_through")


@dataclass(frozen=True, slots=True)
class Watermarks:
    """How far an instance was pruned: events thinned through `events_through`, delivered
    messages of events through `outbox_through` removed (0: nothing)."""

    events_through: int = 0
    outbox_through: int = 0


NOTHING_PRUNED = Watermarks()


def watermarks(store: Store, instance_id: str | None = None) -> dict[str, Watermarks]:
    """The watermarks of one instance (or of every instance pruned), by instance ID."""
    sql = "SELECT instance_id, events_through, outbox_through FROM statekit_retention"
    params: tuple[str, ...] = ()
    if instance_id is not None:
        sql += " WHERE instance_id = ?"
        params = (instance_id,)
    rows = store.execute(sql, params).fetchall()
    return {str(r[0]): Watermarks(int(r[1]), int(r[2])) for r in rows}


def count_outbox(store: Store, before: float) -> int:
    """How many delivered messages `delete_outbox` would remove."""
    return int(store.execute(f"SELECT COUNT(*) {_PRUNABLE_OUTBOX}", (before,)).fetchone()[0])


def delete_outbox(store: Store, before: float, limit: int, now: float) -> int:
    """Remove up to `limit` delivered messages delivered before `before` (oldest first),
    raising their instances' `outbox_through`; return how many went."""
    rows = store.execute(
        f"SELECT o.id, o.instance_id, o.sequence {_PRUNABLE_OUTBOX} ORDER BY o.id LIMIT ?",
        (before, limit),
    ).fetchall()
    if not rows:
        return 0
    through: dict[str, int] = {}
    for _, instance_id, sequence in rows:
        through[instance_id] = max(through.get(instance_id, 0), int(sequence))
    store.executemany(
        "DELETE FROM statekit_outbox WHERE id = ? AND status = 'delivered'",
        [(r[0],) for r in rows],
    )
    store.executemany(_RAISE_OUTBOX, [(i, s, now) for i, s in sorted(through.items())])
    return len(rows)


def count_inbox(store: Store, before: float) -> int:
    """How many inbox rows `delete_inbox` would remove."""
    return int(store.execute(f"SELECT COUNT(*) {_OLD_INBOX}", (before,)).fetchone()[0])


def delete_inbox(store: Store, before: float, limit: int) -> int:
    """Remove up to `limit` inbox rows processed before `before`; return how many went."""
    rows = store.execute(
        f"SELECT consumer, instance_id, message_id {_OLD_INBOX} LIMIT ?", (before, limit)
    ).fetchall()
    store.executemany(
        "DELETE FROM statekit_inbox WHERE consumer = ? AND instance_id = ? AND message_id = ?",
        [tuple(r) for r in rows],
    )
    return len(rows)


def count_rejections(store: Store, before: float) -> int:
    """How many audited rejections `delete_rejections` would remove."""
    return int(store.execute(f"SELECT COUNT(*) {_OLD_REJECTIONS}", (before,)).fetchone()[0])


def delete_rejections(store: Store, before: float, limit: int) -> int:
    """Remove up to `limit` audited rejections recorded before `before` (oldest first)."""
    rows = store.execute(
        f"SELECT id {_OLD_REJECTIONS} ORDER BY id LIMIT ?", (before, limit)
    ).fetchall()
    store.executemany("DELETE FROM statekit_rejections WHERE id = ?", [(r[0],) for r in rows])
    return len(rows)


def count_unthinned(store: Store, instance_id: str, through: int) -> int:
    """How many event rows of the instance at or before `through` still have their payload."""
    row = store.execute(f"SELECT COUNT(*) {_UNTHINNED}", (instance_id, 0, through)).fetchone()
    return int(row[0])


def thin_events(
    store: Store, instance_id: str, through: int, after: int, limit: int, now: float
) -> tuple[int, int]:
    """Thin up to `limit` event rows of the instance after sequence `after` and at or
    before `through`: keep the row and its full payload hash, empty its payload and
    evidence; the watermark is raised to `through` first, in the same transaction.
    Return how many rows were thinned and the last one's sequence (`after`: none)."""
    store.execute(_RAISE_EVENTS, (instance_id, through, now))
    rows = store.execute(
        f"SELECT sequence, type, payload, payload_sha256 {_UNTHINNED} ORDER BY sequence LIMIT ?",
        (instance_id, after, through, limit),
    ).fetchall()
    store.executemany(
        "UPDATE statekit_events SET payload = ?, evidence = ?, payload_sha256 = ? "
        "WHERE instance_id = ? AND sequence = ?",
        [_thinned(instance_id, r) for r in rows],
    )
    return len(rows), int(rows[-1][0]) if rows else after


def _thinned(instance_id: str, row: Sequence[object]) -> tuple[object, ...]:
    """The update of one row: its hash kept whole (it can no longer be recomputed)."""
    sequence, event_type, payload, stored = row
    try:
        full: object = bytes.fromhex(unpack_hash(event_type, payload, stored))
    except ValueError:  # not a hash at all (a damaged row): kept as it is
        full = stored
    return (THINNED, THINNED, full, instance_id, sequence)


def reclaim(store: Store, tables: Sequence[str]) -> None:
    """PostgreSQL: `VACUUM (ANALYZE)` the tables rows were removed from or thinned in,
    outside any transaction. A deleted row stays in its table's pages until vacuumed, and
    the dispatcher's claim, which scans the outbox in order, walks over it: at 100,000
    removed messages the claim was slower after the prune than before it until the
    table was vacuumed (bench/retention.py). VACUUM takes no lock a writer waits for.
    SQLite: nothing (a deleted row leaves its b-tree at once)."""
    if store.dialect != "postgresql":
        return
    for table in tables:
        store.execute(f"VACUUM (ANALYZE) {table}")

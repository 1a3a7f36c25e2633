"""Messages: the outbox (inserted with the event that emitted them, claimed by dispatchers
with a lease, settled after each delivery attempt) and the inbox (a consumer's record
of the messages it processed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statekit.runner.store.rows import (
    NewOutboxRow,
    OutboxRow,
)
from statekit.runner.store.sql_access import SqlAccess
from statekit.runner.store.statements import (
    ELIGIBLE,
    INSERT_OUTBOX,
    OUTBOX_COLUMNS,
    new_outbox_values,
)


class MessageQueries(SqlAccess):
    """A `Store`'s outbox and inbox."""

    __slots__ = ()

    # ---- outbox ------------------------------------------------------------------------
    def insert_outbox(self, rows: Sequence[NewOutboxRow]) -> None:
        """Put messages in the outbox, pending."""
        self.executemany(
            INSERT_OUTBOX,
            [new_outbox_values(r) for r in rows],
        )

    def outbox(self, statuses: Sequence[str], instance_id: str | None = None) -> list[OutboxRow]:
        """Messages in the given states, in outbox order."""
        marks = ", ".join("?" for _ in statuses)
        sql = f"SELECT {OUTBOX_COLUMNS} FROM statekit_outbox o WHERE o.status IN ({marks})"
        params: list[Any] = list(statuses)
        if instance_id is not None:
            sql += " AND o.instance_id = ?"
            params.append(instance_id)
        rows = self.execute(sql + " ORDER BY o.id", params).fetchall()
        return [OutboxRow(*r) for r in rows]  # selected in the record's field order

    def release_outbox_claims(self, owner: str) -> int:
        """Release the claims `owner` holds on messages still pending (a dispatcher that
        lost its connection in the middle of a batch, before it claims again); how many."""
        cursor = self.execute(
            "UPDATE statekit_outbox SET claimed_by = NULL, claimed_until = NULL "
            "WHERE claimed_by = ? AND status = 'pending'",
            (owner,),
        )
        return int(cursor.rowcount)

    def next_claimable(self) -> float | None:
        """The earliest time any pending message can be claimed (None when none is
        pending): the minimum, over the pending messages at the head of their
        instance, of the later of the next attempt's time and the claim's expiry.
        One aggregate query; no message rows are loaded."""
        row = self.execute(
            "SELECT MIN(CASE WHEN o.claimed_until > o.next_attempt_at THEN o.claimed_until "
            "ELSE o.next_attempt_at END) FROM statekit_outbox o WHERE o.status = 'pending' "
            "AND NOT EXISTS (SELECT 1 FROM statekit_outbox p WHERE p.instance_id = o.instance_id "
            "AND p.status = 'pending' AND p.id < o.id)"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def settle_outbox(
        self,
        message: int,
        *,
        status: str,
        attempts: int,
        next_attempt_at: float,
        error: str | None,
        now: float,
    ) -> None:
        """Record a delivery attempt's end and release the claim."""
        delivered = now if status == "delivered" else None
        self.execute(
            "UPDATE statekit_outbox SET status = ?, attempts = ?, next_attempt_at = ?, "
            "last_error = ?, delivered_at = ?, claimed_by = NULL, claimed_until = NULL "
            "WHERE id = ? AND status = 'pending'",
            (status, attempts, next_attempt_at, error, delivered, message),
        )

    def claim_outbox(self, owner: str, now: float, lease: float, limit: int) -> list[OutboxRow]:
        """Claim up to `limit` deliverable messages for `owner` until `now + lease`.

        The claim (with its lease) outlives the transaction, so delivery happens
        outside it and a crashed dispatcher's messages come back when the lease ends;
        `claim_lock_clause` says how each dialect keeps dispatchers apart.
        """
        with self.write():
            rows = self.execute(
                f"SELECT {OUTBOX_COLUMNS} FROM statekit_outbox o WHERE {ELIGIBLE} "
                f"ORDER BY o.id LIMIT ?{self.claim_lock_clause}",
                (now, now, limit),
            ).fetchall()
            self.executemany(
                "UPDATE statekit_outbox SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                [(owner, now + lease, r[0]) for r in rows],
            )
        return [OutboxRow(*r) for r in rows]  # selected in the record's field order

    # ---- inbox -------------------------------------------------------------------------
    def inbox_claim(self, consumer: str, instance_id: str, message_id: str, now: float) -> bool:
        """Record that `consumer` processed the message; False when it already had."""
        cursor = self.execute(
            "INSERT INTO statekit_inbox (consumer, instance_id, message_id, processed_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (consumer, instance_id, message_id, now),
        )
        return bool(cursor.rowcount == 1)

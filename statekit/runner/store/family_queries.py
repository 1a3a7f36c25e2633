"""Families and messages between instances (schema 11, `store.migrations_v11`): the links
of invoked children, and the inbox of messages to instances outside the sender's family."""

from __future__ import annotations

from collections.abc import Sequence

from statekit.runner.store.family_rows import (
    DELIVERED,
    InstanceMessageRow,
    LinkRow,
    NewInstanceMessage,
)
from statekit.runner.store.migrations_v11 import FAMILY_LINKS, INSTANCE_INBOX
from statekit.runner.store.sql_access import SqlAccess

_LINK_COLUMNS = (
    "child_instance_id, parent_instance_id, invoke_id, root_instance_id, started_sequence, "
    "status, created_at, ended_at"
)
_MESSAGE_COLUMNS = (
    "m.id, m.target_chart, m.target_instance_id, m.sender_instance_id, m.sender_version, "
    "m.message_index, m.event, m.payload, m.event_id, m.state, m.reply_event, "
    "m.outcome_status, m.outcome_reason, m.created_at, m.delivered_at"
)
_HEAD_OF_SENDER = (
    f"NOT EXISTS (SELECT 1 FROM {INSTANCE_INBOX} p WHERE p.sender_instance_id = "
    "m.sender_instance_id AND p.state = 'pending' AND p.id < m.id)"
)


class FamilyQueries(SqlAccess):
    """A `Store`'s family links and messages between instances."""

    __slots__ = ()

    # ---- links -------------------------------------------------------------------------
    def insert_links(self, rows: Sequence[LinkRow]) -> None:
        """Record invoked children (inside the family step's transaction)."""
        self.executemany(
            f"INSERT INTO {FAMILY_LINKS} ({_LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (r.child_instance_id, r.parent_instance_id, r.invoke_id, r.root_instance_id,
                 r.started_sequence, r.status, r.created_at, r.ended_at)
                for r in rows
            ],
        )  # fmt: skip

    def end_link(self, child_instance_id: str, status: str, now: float) -> bool:
        """Mark an active child done or cancelled; False when it was not active."""
        cursor = self.execute(
            f"UPDATE {FAMILY_LINKS} SET status = ?, ended_at = ? "
            "WHERE child_instance_id = ? AND status = 'active'",
            (status, now, child_instance_id),
        )
        return bool(cursor.rowcount == 1)

    def link(self, child_instance_id: str) -> LinkRow | None:
        """The link of an invoked child (None: the instance was not invoked)."""
        row = self.execute(
            f"SELECT {_LINK_COLUMNS} FROM {FAMILY_LINKS} WHERE child_instance_id = ?",
            (child_instance_id,),
        ).fetchone()
        return None if row is None else LinkRow(*row)

    def children(self, parent_instance_id: str) -> list[LinkRow]:
        """The children an instance invoked, oldest first."""
        rows = self.execute(
            f"SELECT {_LINK_COLUMNS} FROM {FAMILY_LINKS} WHERE parent_instance_id = ? "
            "ORDER BY started_sequence, child_instance_id",
            (parent_instance_id,),
        ).fetchall()
        return [LinkRow(*r) for r in rows]

    def family_links(self, root_instance_id: str) -> list[LinkRow]:
        """Every link of the family rooted at `root_instance_id`."""
        rows = self.execute(
            f"SELECT {_LINK_COLUMNS} FROM {FAMILY_LINKS} WHERE root_instance_id = ? "
            "ORDER BY started_sequence, child_instance_id",
            (root_instance_id,),
        ).fetchall()
        return [LinkRow(*r) for r in rows]

    def root_of(self, instance_id: str) -> str:
        """The root of the instance's family (the instance itself when it was not invoked)."""
        row = self.execute(
            f"SELECT root_instance_id FROM {FAMILY_LINKS} WHERE child_instance_id = ?",
            (instance_id,),
        ).fetchone()
        return instance_id if row is None else str(row[0])

    # ---- messages between instances ----------------------------------------------------
    def insert_instance_messages(self, rows: Sequence[NewInstanceMessage]) -> None:
        """Write messages to other instances, pending (inside the sender's transaction)."""
        self.executemany(
            f"INSERT INTO {INSTANCE_INBOX} (target_chart, target_instance_id, "
            "sender_instance_id, sender_version, message_index, event, payload, event_id, "
            "reply_event, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (r.target_chart, r.target_instance_id, r.sender_instance_id, r.sender_version,
                 r.message_index, r.event, r.payload, r.event_id, r.reply_event, r.created_at)
                for r in rows
            ],
        )  # fmt: skip

    def deliverable_messages(self, limit: int) -> list[InstanceMessageRow]:
        """Up to `limit` pending messages that are the first pending one of their sender,
        oldest first (a sender's later messages wait for its earlier ones)."""
        rows = self.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM {INSTANCE_INBOX} m WHERE m.state = 'pending' "
            f"AND {_HEAD_OF_SENDER} ORDER BY m.id LIMIT ?",
            (limit,),
        ).fetchall()
        return [InstanceMessageRow(*r) for r in rows]

    def pending_message(self, message_id: int) -> InstanceMessageRow | None:
        """The message, if still pending and the first pending one of its sender, locked
        until the transaction ends where the dialect locks rows (None: another worker
        delivered it, or an earlier one of its sender is pending again)."""
        row = self.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM {INSTANCE_INBOX} m WHERE m.id = ? "
            f"AND m.state = 'pending' AND {_HEAD_OF_SENDER}{self.message_lock_clause}",
            (message_id,),
        ).fetchone()
        return None if row is None else InstanceMessageRow(*row)

    def settle_message(self, message_id: int, status: str, reason: str | None, now: float) -> None:
        """Record a message delivered with the receiving step's status and reason."""
        self.execute(
            f"UPDATE {INSTANCE_INBOX} SET state = ?, outcome_status = ?, outcome_reason = ?, "
            "delivered_at = ? WHERE id = ?",
            (DELIVERED, status, reason, now, message_id),
        )

    def instance_messages(self, instance_id: str) -> list[InstanceMessageRow]:
        """The messages an instance sent or received, in order."""
        rows = self.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM {INSTANCE_INBOX} m WHERE m.sender_instance_id = ? "
            "OR m.target_instance_id = ? ORDER BY m.id",
            (instance_id, instance_id),
        ).fetchall()
        return [InstanceMessageRow(*r) for r in rows]

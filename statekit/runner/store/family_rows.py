"""The rows of schema 11 (`store.migrations_v11`) as the runner reads and writes them: a
family link and a message between instances."""

from __future__ import annotations

from dataclasses import dataclass

ACTIVE, DONE, CANCELLED = "active", "done", "cancelled"
"""A link's status: the child runs, reached a final state, or was cancelled."""

PENDING, DELIVERED = "pending", "delivered"
"""A message's state."""


@dataclass(frozen=True, slots=True)
class LinkRow:
    """An invoked child instance's link to its parent and its family's root (see
    `store.migrations_v11`); `started_sequence` is the parent's sequence whose step
    started it (0: the parent's creation)."""

    child_instance_id: str
    parent_instance_id: str
    invoke_id: str
    root_instance_id: str
    started_sequence: int
    status: str
    created_at: float
    ended_at: float | None = None


@dataclass(frozen=True, slots=True)
class NewInstanceMessage:
    """A message to an instance outside the sender's family, as its sender's transaction
    writes it: pending, delivered later under `event_id` (`runner.message_delivery`)."""

    target_chart: str
    target_instance_id: str
    sender_instance_id: str
    sender_version: int
    message_index: int
    event: str
    payload: str
    event_id: str
    reply_event: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class InstanceMessageRow:
    """A stored message between instances: its row ID (the order of a sender's messages),
    what `NewInstanceMessage` wrote, its state and, once delivered, the receiving step's
    status and reason."""

    id: int
    target_chart: str
    target_instance_id: str
    sender_instance_id: str
    sender_version: int
    message_index: int
    event: str
    payload: str
    event_id: str
    state: str
    reply_event: str | None
    outcome_status: str | None
    outcome_reason: str | None
    created_at: float
    delivered_at: float | None

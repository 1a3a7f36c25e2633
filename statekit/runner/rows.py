"""Rows read back from a store, as frozen values (JSON columns still as text)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EventRow:
    """One accepted event of an instance's history."""

    instance_id: str
    sequence: int
    event_id: str
    type: str
    payload: str
    payload_sha256: str
    status: str
    chart_version: int
    evidence: str
    recorded_at: float


@dataclass(frozen=True, slots=True)
class RejectionRow:
    """One audited rejection or history conflict (nothing changed)."""

    id: int
    instance_id: str
    event_id: str
    type: str
    payload: str
    payload_sha256: str
    status: str
    reason: str
    message: str | None
    version: int
    detail: str
    recorded_at: float


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    """A stored snapshot: the state after `through_sequence` events."""

    instance_id: str
    through_sequence: int
    state: str
    state_sha256: str
    chart_digest: str
    chart_version: int
    engine_version: str
    created_at: float


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """An outbox message with its delivery state (`pending`, `delivered`, `dead`)."""

    id: int
    instance_id: str
    message_id: str
    sequence: int
    type: str
    payload: str
    status: str
    attempts: int
    next_attempt_at: float
    last_error: str | None
    created_at: float
    delivered_at: float | None


@dataclass(frozen=True, slots=True)
class ChartRow:
    """A chart version known to the store (its YAML source when it was available)."""

    digest: str
    name: str
    version: int
    source: str | None

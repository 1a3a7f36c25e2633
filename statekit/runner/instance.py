"""What `Runner.load` and `Runner.history` return: an instance as stored, and the
accepted events of its history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statekit.engine.state import State


@dataclass(frozen=True, slots=True)
class Instance:
    """An instance as stored: its version, its state and the chart version it runs on."""

    instance_id: str
    version: int
    state: State
    chart_name: str
    chart_version: int
    chart_digest: str


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """One entry of a history (an accepted event, or a timer delivery the chart rejected,
    status REJECTED): where it sits, what it was, what it did; `idempotency_key` is
    the business key of its fact (None: its event declares none); `clock_ms` the
    runner's clock reading it was decided at (None: recorded before the store had
    timers)."""

    sequence: int
    event_id: str
    type: str
    payload: dict[str, Any]
    payload_sha256: str
    status: str
    chart_version: int
    evidence: dict[str, Any]
    recorded_at: float
    idempotency_key: str | None = None
    clock_ms: int | None = None

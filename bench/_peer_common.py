"""What the peer engines of `bench/peers.py` share: the adapter shape, the task chart's
context and guards in plain Python, and the names of its atomic states.

The task chart of the peers is machines/task.yaml as faithfully as each library
allows (bench/README.md, "Engine vs peers", lists the simplifications): three
regions, the same guards and context updates, the same outbox messages, no
invariant checks and no classification of rejected events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

Payload = Mapping[str, Any] | None


class Adapter(NamedTuple):
    """One peer engine running one chart.

    `new()` makes a started instance; `send(instance, event, payload)` processes one
    event (the instance is mutable); `leaves(instance)` names the active atomic states
    as our dotted paths; `is_final(instance)` tells whether the run is over;
    `outbox(instance)` lists the messages emitted so far.
    """

    name: str
    new: Callable[[], Any]
    send: Callable[[Any, str, Payload], Any]
    leaves: Callable[[Any], frozenset[str]]
    is_final: Callable[[Any], bool]
    outbox: Callable[[Any], list[tuple[str, dict[str, Any]]]] = lambda instance: []


FLAT_STATES = ("idle", "loading", "ready", "playing", "paused", "stopped")
FLAT_TRANSITIONS = (
    ("LOAD", "idle", "loading"),
    ("LOADED", "loading", "ready"),
    ("PLAY", "ready", "playing"),
    ("PAUSE", "playing", "paused"),
    ("RESUME", "paused", "playing"),
    ("STOP", "loading", "stopped"),
    ("STOP", "ready", "stopped"),
    ("STOP", "playing", "stopped"),
    ("STOP", "paused", "stopped"),
    ("RESET", "stopped", "idle"),
)
"""bench.engine_core.FLAT_CHART as (event, source, target)."""

TASK_LEAVES = {
    "queued": "lifecycle.queued",
    "running": "lifecycle.running",
    "cancelling": "lifecycle.cancelling",
    "completed": "lifecycle.completed",
    "failed": "lifecycle.failed",
    "cancelled": "lifecycle.cancelled",
    "none": "cancellation.none",
    "requested": "cancellation.requested",
    "reconciled": "cancellation.reconciled",
    "not_needed": "cancellation.not_needed",
    "absent": "artifact.absent",
    "uploaded": "artifact.uploaded",
    "verified": "artifact.verified",
    "discarded": "artifact.discarded",
}
"""The task chart's atomic states (their names are unique) and their paths."""
TASK_ENDS = frozenset({"completed", "failed", "cancelled"})
"""Every transition into one of these ends all three regions at once."""


class TaskModel:
    """The task chart's context (declared defaults) and an outbox, as a mutable object."""

    def __init__(self) -> None:
        self.attempt = 0
        self.max_attempts = 3
        self.worker_id: str | None = None
        self.lease_until_ms = 0
        self.artifact_attempt = 0
        self.artifact_sha256: str | None = None
        self.last_error: str | None = None
        self.cancelled_by: str | None = None
        self.outbox: list[tuple[str, dict[str, Any]]] = []
        self.state: Any = None  # python-statemachine and transitions keep the state here
        self.before: Any = None  # transitions: the configuration when the event arrived

    # guards (the payload's fields as keyword arguments)

    def next_attempt(self, attempt: int) -> bool:
        return attempt == self.attempt + 1

    def current_attempt(self, attempt: int) -> bool:
        return attempt == self.attempt

    def retry_budget_left(self) -> bool:
        return self.attempt < self.max_attempts

    def checksum_matches(self, sha256: str) -> bool:
        return sha256 == self.artifact_sha256

    # effects

    def start(self, attempt: int, worker_id: str, lease_until_ms: int) -> None:
        self.attempt = attempt
        self.worker_id = worker_id
        self.lease_until_ms = lease_until_ms

    def cancel_queued(self, requested_by: str) -> None:
        self.cancelled_by = requested_by

    def cancel_running(self, requested_by: str) -> None:
        self.cancelled_by = requested_by
        self.outbox.append(
            (
                "TaskCancellationRequested",
                {
                    "attempt": self.attempt,
                    "worker_id": self.worker_id,
                    "requested_by": requested_by,
                },
            )
        )

    def requeue(self, attempt: int, error: str) -> None:
        self.last_error = error
        self.worker_id = None
        self.artifact_attempt = 0
        self.artifact_sha256 = None
        self.outbox.append(("TaskRequeued", {"attempt": attempt, "error": error}))

    def fail(self, error: str, release: bool = False) -> None:
        self.last_error = error
        if release:
            self.worker_id = None

    def release(self) -> None:
        self.worker_id = None

    def upload(self, attempt: int, sha256: str) -> None:
        self.artifact_attempt = attempt
        self.artifact_sha256 = sha256

    def notice(self, kind: str) -> None:
        if kind == "completed":
            body = {"attempt": self.attempt, "sha256": self.artifact_sha256}
        elif kind == "failed":
            body = {"attempt": self.attempt, "error": self.last_error}
        else:
            body = {"attempt": self.attempt, "requested_by": self.cancelled_by}
        self.outbox.append((f"Task{kind.capitalize()}Notice", body))

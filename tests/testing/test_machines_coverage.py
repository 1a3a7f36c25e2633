"""What the rest of the suite leaves out of the reference machines' coverage (`make test`
runs the suite with `--statekit-cov=machines --statekit-cov-fail-under=transition:100,
rejection:100`): the task's last attempt running out of budget."""

from __future__ import annotations

from pathlib import Path

import statekit
from statekit.engine.result import Status

MACHINES = Path(__file__).resolve().parents[2] / "machines"


def test_a_lease_expiring_on_the_last_attempt_fails_the_task_for_good() -> None:
    task = statekit.load(MACHINES / "task.yaml")
    start = task.start({"max_attempts": 1})
    lease = {"attempt": 1, "worker_id": "w1", "lease_until_ms": 1000}
    running = task.send(start, "TaskStarted", lease)
    assert running.applied
    failed = task.send(running.state, "LeaseExpired", {"attempt": 1})
    assert failed.applied
    assert failed.state.leaves == (
        "lifecycle.failed",
        "cancellation.not_needed",
        "artifact.discarded",
    )
    assert failed.state.context["last_error"] == "LEASE_EXPIRED"
    again = task.send(failed.state, "TaskStarted", {**lease, "attempt": 2})
    assert (again.status, again.reason) == (Status.REJECTED, "TASK_FAILED")


def test_no_start_beyond_the_retry_budget() -> None:
    task = statekit.load(MACHINES / "task.yaml")
    lease = {"attempt": 1, "worker_id": "w1", "lease_until_ms": 1000}
    result = task.send(task.start({"max_attempts": 0}), "TaskStarted", lease)
    assert (result.status, result.reason) == (Status.REJECTED, "RETRY_BUDGET_EXHAUSTED")

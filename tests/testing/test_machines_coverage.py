"""What the rest of the suite leaves out of the reference machines' coverage (`make test`
runs the suite with `--statekit-cov=machines --statekit-cov-fail-under=transition:100,
rejection:100`): the task's last attempt running out of budget."""

from __future__ import annotations

from pathlib import Path

import statekit
from statekit.engine.result import Status
from statekit.testing import Simulator

MACHINES = Path(__file__).resolve().parents[2] / "machines"


def test_an_expired_last_attempt_that_recovery_abandons_fails_the_task_for_good() -> None:
    task = statekit.load(MACHINES / "task.yaml")
    sim = Simulator(task, now_ms=0, context={"max_attempts": 1})
    lease = {"attempt": 1, "worker_id": "w1", "lease_until_ms": 1000}
    assert sim.send("TaskStarted", lease).applied
    [expired] = sim.advance(1000)
    assert expired.applied and sim.state.leaves[0] == "lifecycle.recovering.investigating"
    failed = sim.send("AttemptAbandoned", {"attempt": 1})
    assert failed.applied
    assert failed.state.leaves == (
        "lifecycle.failed",
        "cancellation.not_needed",
        "artifact.discarded",
    )
    assert failed.state.context["last_error"] == "LEASE_EXPIRED"
    again = sim.send("TaskStarted", {**lease, "attempt": 2})
    assert (again.status, again.reason) == (Status.REJECTED, "TASK_FAILED")


def test_no_start_beyond_the_retry_budget() -> None:
    task = statekit.load(MACHINES / "task.yaml")
    lease = {"attempt": 1, "worker_id": "w1", "lease_until_ms": 1000}
    result = task.send(task.start({"max_attempts": 0}), "TaskStarted", lease)
    assert (result.status, result.reason) == (Status.REJECTED, "RETRY_BUDGET_EXHAUSTED")

"""The reference machines' coverage gate (`make test` runs the suite with
`--statekit-cov=machines --statekit-cov-fail-under=transition:100,rejection:100`) is met
by deterministic tests alone: tests/machines/test_reference_paths.py reaches every
transition and rejection reason by itself. Below, the task's last attempt running out
of budget, as a story."""

from __future__ import annotations

from pathlib import Path

import pytest

import statekit
from statekit.engine.result import Status
from statekit.testing import Simulator

MACHINES = Path(__file__).resolve().parents[2] / "machines"
REFERENCE_PATHS = MACHINES.parent / "tests" / "machines" / "test_reference_paths.py"


def test_the_reference_paths_alone_meet_the_gate_of_make_test(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        str(REFERENCE_PATHS),
        f"--statekit-cov={MACHINES}",
        "--statekit-cov-fail-under=transition:100,rejection:100",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["statekit coverage reached every bound*"])


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

"""The reference machines' timers on a virtual clock (`statekit.testing.Simulator`): the
task's lease and its recovery paths, the backoff before a retry, the payment's
15-minute timeout and a result that arrives just before it (machines/README.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import statekit
from statekit.engine.chart import Chart
from statekit.engine.result import Result, Status
from statekit.testing import Simulator

MACHINES = Path(__file__).resolve().parents[2] / "machines"
SECOND, MINUTE = 1000, 60_000
T0 = 1_700_000_000_000
"""The virtual clock's start: an epoch time, as the lease deadlines are epoch ms."""
LEASE = 30 * SECOND
SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.fixture(scope="module")
def task() -> Chart:
    return statekit.load(MACHINES / "task.yaml")


@pytest.fixture(scope="module")
def payment() -> Chart:
    return statekit.load(MACHINES / "payment.yaml")


def applied(result: Result) -> Result:
    assert result.status is Status.APPLIED, (result.reason, result.message)
    return result


def rejected(result: Result, reason: str) -> None:
    assert (result.status, result.reason) == (Status.REJECTED, reason), result.message


def lifecycle(sim: Simulator) -> str:
    return next(leaf for leaf in sim.state.leaves if leaf.startswith("lifecycle."))


# ---- task: the lease ------------------------------------------------------------------


def start(sim: Simulator, attempt: int = 1, lease_ms: int = LEASE) -> Result:
    payload = {
        "attempt": attempt,
        "worker_id": f"w-{attempt}",
        "lease_until_ms": sim.now_ms + lease_ms,
    }
    return applied(sim.send("TaskStarted", payload))


def expired(task: Chart, **context: Any) -> Simulator:
    """A task whose first attempt's lease ran out: recovering, investigating."""
    sim = Simulator(task, now_ms=T0, context=context or None)
    start(sim)
    sim.advance(LEASE)
    assert lifecycle(sim) == "lifecycle.recovering.investigating"
    return sim


def test_start_then_30_seconds_without_a_report_is_recovering(task: Chart) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    assert sim.next_due_ms == T0 + LEASE
    assert sim.advance(LEASE - 1) == []
    assert lifecycle(sim) == "lifecycle.running"
    [fired] = sim.advance(1)
    applied(fired)
    assert (
        fired.timer is not None and fired.timer.event == "at(ctx.lease_until_ms)@lifecycle.running"
    )
    assert sim.state.leaves == (
        "lifecycle.recovering.investigating",
        "cancellation.none",
        "artifact.absent",
    )
    assert [(m.type, dict(m.payload)) for m in fired.emitted] == [
        ("TaskLeaseExpired", {"attempt": 1, "worker_id": "w-1"})
    ]
    assert sim.state.context["worker_id"] is None
    assert sim.state.context["last_error"] == "LEASE_EXPIRED"
    assert sim.next_due_ms is None  # recovering waits for the recovery events, not a clock


def test_a_renewal_moves_the_deadline(task: Chart) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    sim.advance(20 * SECOND)
    renewed = {"attempt": 1, "lease_until_ms": T0 + 50 * SECOND}
    result = applied(sim.send("LeaseRenewed", renewed))
    assert [t.id for t in result.timers_cancelled] == [t.id for t in result.timers_armed]
    assert sim.next_due_ms == T0 + 50 * SECOND
    assert sim.advance(LEASE - 1) == []  # past the first deadline: the old timer is gone
    assert lifecycle(sim) == "lifecycle.running"
    sim.advance(SECOND)
    assert lifecycle(sim) == "lifecycle.recovering.investigating"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"attempt": 1, "lease_until_ms": T0 + LEASE - 1}, "LEASE_NOT_EXTENDED"),
        ({"attempt": 0, "lease_until_ms": T0 + 2 * LEASE}, "STALE_ATTEMPT"),
        ({"attempt": 2, "lease_until_ms": T0 + 2 * LEASE}, "STALE_ATTEMPT"),
    ],
)
def test_a_renewal_that_does_not_extend_the_current_lease_is_refused(
    task: Chart, payload: dict[str, Any], reason: str
) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    rejected(sim.send("LeaseRenewed", payload), reason)
    assert sim.next_due_ms == T0 + LEASE


def test_a_lease_already_over_at_start_expires_at_the_next_advance(task: Chart) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim, lease_ms=-5 * SECOND)
    assert lifecycle(sim) == "lifecycle.running"
    [fired] = sim.advance(0)
    applied(fired)
    assert lifecycle(sim) == "lifecycle.recovering.investigating"


def test_completion_before_the_deadline_cancels_the_lease(task: Chart) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    applied(sim.send("ArtifactUploaded", {"attempt": 1, "sha256": SHA}))
    applied(sim.send("ArtifactVerified", {"attempt": 1, "sha256": SHA}))
    sim.advance(LEASE - 1)
    done = applied(sim.send("TaskCompleted", {"attempt": 1}))
    assert [t.event for t in done.timers_cancelled] == ["at(ctx.lease_until_ms)@lifecycle.running"]
    assert sim.state.is_final and sim.next_due_ms is None
    assert sim.advance(10 * LEASE) == []


# ---- task: recovery decides ------------------------------------------------------------


def test_recovered_artifact_completes_the_task(task: Chart) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    applied(sim.send("ArtifactUploaded", {"attempt": 1, "sha256": SHA}))
    sim.advance(LEASE)
    # the stored artifact is verified after the lease ran out: recovery may accept it
    rejected(sim.send("ArtifactRecovered", {"attempt": 1}), "ARTIFACT_NOT_VERIFIED")
    applied(sim.send("ArtifactVerified", {"attempt": 1, "sha256": SHA}))
    done = applied(sim.send("ArtifactRecovered", {"attempt": 1}))
    assert sim.state.leaves == (
        "lifecycle.completed",
        "cancellation.not_needed",
        "artifact.verified",
    )
    assert [m.type for m in done.emitted] == ["TaskCompletedNotice"]


def test_an_abandoned_attempt_waits_its_backoff_then_is_queued(task: Chart) -> None:
    sim = expired(task)
    applied(sim.send("AttemptAbandoned", {"attempt": 1}))
    assert sim.state.leaves == ("lifecycle.waiting_retry", "cancellation.none", "artifact.absent")
    assert sim.state.context["backoff_ms"] == 30 * SECOND
    assert sim.next_due_ms == sim.now_ms + 30 * SECOND
    rejected(
        sim.send("TaskStarted", {"attempt": 2, "worker_id": "w-2", "lease_until_ms": 0}),
        "RETRY_BACKOFF",
    )
    sim.advance(30 * SECOND - 1)
    assert lifecycle(sim) == "lifecycle.waiting_retry"
    [queued] = sim.advance(1)
    applied(queued)
    assert lifecycle(sim) == "lifecycle.queued"
    start(sim, attempt=2)
    # the second abandoned attempt waits twice as long
    sim.advance(LEASE)
    applied(sim.send("AttemptAbandoned", {"attempt": 2}))
    assert sim.state.context["backoff_ms"] == 60 * SECOND


def test_an_abandoned_last_attempt_fails_the_task(task: Chart) -> None:
    sim = expired(task, max_attempts=1)
    result = applied(sim.send("AttemptAbandoned", {"attempt": 1}))
    assert sim.state.leaves == ("lifecycle.failed", "cancellation.not_needed", "artifact.discarded")
    assert [(m.type, dict(m.payload)) for m in result.emitted] == [
        ("TaskFailedNotice", {"attempt": 1, "error": "LEASE_EXPIRED"})
    ]


def test_an_unknown_effect_fails_the_task(task: Chart) -> None:
    sim = expired(task)
    applied(sim.send("EffectUnknown", {"attempt": 1}))
    assert lifecycle(sim) == "lifecycle.failed"
    assert sim.state.context["last_error"] == "EFFECT_UNKNOWN"
    assert sim.state.is_final


@pytest.mark.parametrize(
    ("decision", "payload", "ends_in"),
    [
        ("AttemptAbandoned", {"attempt": 1}, "lifecycle.waiting_retry"),
        ("EffectUnknown", {"attempt": 1}, "lifecycle.failed"),
    ],
)
def test_a_person_decides_after_review(
    task: Chart, decision: str, payload: dict[str, Any], ends_in: str
) -> None:
    sim = expired(task)
    review = {"attempt": 1, "reason": "upload half written"}
    result = applied(sim.send("ReviewRequested", review))
    assert [m.type for m in result.emitted] == ["TaskReviewRequested"]
    assert lifecycle(sim) == "lifecycle.recovering.in_review"
    assert sim.state.context["review_reason"] == "upload half written"
    assert sim.send("ReviewRequested", review).status is Status.ALREADY_APPLIED
    applied(sim.send(decision, payload))
    assert lifecycle(sim) == ends_in


@pytest.mark.parametrize(
    "event", ["ArtifactRecovered", "AttemptAbandoned", "EffectUnknown", "ReviewRequested"]
)
def test_recovery_decisions_for_another_attempt_are_stale(task: Chart, event: str) -> None:
    sim = expired(task)
    payload: dict[str, Any] = {"attempt": 0}
    if event == "ReviewRequested":
        payload["reason"] = "x"
    rejected(sim.send(event, payload), "STALE_ATTEMPT")


def test_a_cancel_while_recovering_waits_for_reconciliation(task: Chart) -> None:
    sim = expired(task)
    result = applied(sim.send("TaskCancelled", {"requested_by": "ann"}))
    assert [m.type for m in result.emitted] == ["TaskCancellationRequested"]
    assert sim.state.leaves == (
        "lifecycle.cancelling",
        "cancellation.requested",
        "artifact.absent",
    )
    # cancelling's lease timer: the lease is over and nobody holds it any more
    [released] = sim.advance(0)
    rejected(released, "LEASE_ALREADY_RELEASED")
    assert released.timer is not None and sim.next_due_ms is None
    rejected(sim.send("AttemptAbandoned", {"attempt": 1}), "CANCELLATION_IN_PROGRESS")
    applied(sim.send("EffectsReconciled", {"attempt": 1}))
    assert lifecycle(sim) == "lifecycle.cancelled"


def test_a_cancelled_running_attempt_releases_its_lease_when_it_runs_out(task: Chart) -> None:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    applied(sim.send("TaskCancelled", {"requested_by": "ann"}))
    assert sim.state.context["worker_id"] == "w-1"
    [released] = sim.advance(LEASE)
    applied(released)
    assert lifecycle(sim) == "lifecycle.cancelling"  # not recovering: running's timer is gone
    assert sim.state.context["worker_id"] is None


def test_a_cancel_while_waiting_to_retry_ends_the_task_at_once(task: Chart) -> None:
    sim = expired(task)
    applied(sim.send("AttemptAbandoned", {"attempt": 1}))
    applied(sim.send("TaskCancelled", {"requested_by": "ann"}))
    assert sim.state.leaves == (
        "lifecycle.cancelled",
        "cancellation.reconciled",
        "artifact.discarded",
    )
    assert sim.next_due_ms is None


# ---- task: every event in the new states -----------------------------------------------

PAYLOADS: dict[str, dict[str, Any]] = {
    "TaskStarted": {"attempt": 2, "worker_id": "w-9", "lease_until_ms": T0 + 10 * LEASE},
    "LeaseRenewed": {"attempt": 1, "lease_until_ms": T0 + 10 * LEASE},
    "TaskCompleted": {"attempt": 1},
    "TaskFailed": {"attempt": 1, "error": "late", "retryable": True},
    "TaskCancelled": {"requested_by": "ann"},
    "EffectsReconciled": {"attempt": 1},
    "ArtifactUploaded": {"attempt": 1, "sha256": SHA},
    "ArtifactVerified": {"attempt": 1, "sha256": SHA},
    "ArtifactRecovered": {"attempt": 1},
    "AttemptAbandoned": {"attempt": 1},
    "EffectUnknown": {"attempt": 1},
    "ReviewRequested": {"attempt": 1, "reason": "x"},
}


def _investigating(task: Chart) -> Simulator:
    return expired(task)


def _in_review(task: Chart) -> Simulator:
    sim = expired(task)
    applied(sim.send("ReviewRequested", PAYLOADS["ReviewRequested"]))
    return sim


def _waiting_retry(task: Chart) -> Simulator:
    sim = expired(task)
    applied(sim.send("AttemptAbandoned", {"attempt": 1}))
    return sim


def _queued(task: Chart) -> Simulator:
    return Simulator(task, now_ms=T0)


def _running(task: Chart) -> Simulator:
    sim = Simulator(task, now_ms=T0)
    start(sim)
    return sim


def _cancelling(task: Chart) -> Simulator:
    sim = _running(task)
    applied(sim.send("TaskCancelled", {"requested_by": "ann"}))
    return sim


SETUPS: dict[str, Callable[[Chart], Simulator]] = {
    "investigating": _investigating,
    "in_review": _in_review,
    "waiting_retry": _waiting_retry,
    "queued": _queued,
    "running": _running,
    "cancelling": _cancelling,
}
APPLIED, ALREADY = "APPLIED", "ALREADY_APPLIED"
DECISIONS = ("ArtifactRecovered", "AttemptAbandoned", "EffectUnknown", "ReviewRequested")
RECOVERING = {
    "TaskStarted": "RECOVERY_IN_PROGRESS",
    "LeaseRenewed": "LEASE_EXPIRED",
    "TaskCompleted": "LEASE_EXPIRED",
    "TaskFailed": "LEASE_EXPIRED",
    "TaskCancelled": APPLIED,
    "EffectsReconciled": "NO_CANCELLATION_REQUESTED",
    "ArtifactUploaded": "TASK_NOT_RUNNING",
    "ArtifactVerified": "ARTIFACT_NOT_UPLOADED",
    "ArtifactRecovered": "ARTIFACT_NOT_VERIFIED",
    "AttemptAbandoned": APPLIED,
    "EffectUnknown": APPLIED,
}
OUTCOMES: dict[str, dict[str, str]] = {
    "investigating": {**RECOVERING, "ReviewRequested": APPLIED},
    "in_review": {**RECOVERING, "ReviewRequested": ALREADY},
    "waiting_retry": {
        "TaskStarted": "RETRY_BACKOFF",
        "LeaseRenewed": "TASK_NOT_RUNNING",
        "TaskCompleted": "TASK_NOT_RUNNING",
        "TaskFailed": "TASK_NOT_RUNNING",
        "TaskCancelled": APPLIED,
        "EffectsReconciled": "NO_CANCELLATION_REQUESTED",
        "ArtifactUploaded": "TASK_NOT_RUNNING",
        "ArtifactVerified": "ARTIFACT_NOT_UPLOADED",
        **dict.fromkeys(DECISIONS, "NOT_RECOVERING"),
    },
    "queued": {"LeaseRenewed": "TASK_NOT_RUNNING", **dict.fromkeys(DECISIONS, "NOT_RECOVERING")},
    "running": {"LeaseRenewed": APPLIED, **dict.fromkeys(DECISIONS, "NOT_RECOVERING")},
    "cancelling": dict.fromkeys(("LeaseRenewed", *DECISIONS), "CANCELLATION_IN_PROGRESS"),
}
CASES = [(where, event, want) for where, row in OUTCOMES.items() for event, want in row.items()]


@pytest.mark.parametrize(("where", "event", "want"), CASES, ids=[f"{w}-{e}" for w, e, _ in CASES])
def test_every_new_pair_has_its_outcome(task: Chart, where: str, event: str, want: str) -> None:
    """Every event in the states the lease added, and the new events in the old states."""
    sim = SETUPS[where](task)
    before = sim.state
    result = sim.send(event, PAYLOADS[event])
    if want in (APPLIED, ALREADY):
        assert result.status.value == want, (result.reason, result.message)
    else:
        rejected(result, want)
        assert result.state == before and sim.state == before


# ---- payment: the 15-minute timeout ----------------------------------------------------

TIMEOUT = 15 * MINUTE


def paying(payment: Chart) -> Simulator:
    sim = Simulator(payment, now_ms=T0)
    applied(sim.send("START_PAY", {"amount": 100}))
    return sim


def test_a_payment_without_a_result_closes_after_15_minutes(payment: Chart) -> None:
    sim = paying(payment)
    assert sim.next_due_ms == T0 + TIMEOUT
    [closed] = sim.advance(TIMEOUT)
    applied(closed)
    assert closed.timer is not None and closed.timer.event == "after(15m)@processing"
    assert sim.state.configuration == {"closed"} and sim.state.is_final
    assert [(m.type, dict(m.payload)) for m in closed.emitted] == [
        ("PaymentTimedOut", {"amount": 100, "attempts": 1}),
        ("PaymentClosed", {"amount": 100, "refunded": 0, "channel_ref": None}),
    ]
    assert sim.state.context["failure_code"] == "TIMED_OUT"
    late = sim.send("PAY_SUCCESS", {"channel_ref": "ch-1"})
    rejected(late, "LATE_SUCCESS_AFTER_CLOSE")


@pytest.mark.parametrize(
    ("event", "payload", "then"),
    [
        ("PAY_SUCCESS", {"channel_ref": "ch-1"}, "success"),
        ("PAY_FAILED", {"code": "declined"}, "failed"),
    ],
)
def test_a_result_just_before_the_timeout_wins(
    payment: Chart, event: str, payload: dict[str, Any], then: str
) -> None:
    sim = paying(payment)
    assert sim.advance(TIMEOUT - 1) == []
    result = applied(sim.send(event, payload))
    assert [t.event for t in result.timers_cancelled] == ["after(15m)@processing"]
    assert sim.state.configuration == {then}
    assert sim.next_due_ms is None and sim.advance(TIMEOUT) == []
    assert sim.state.configuration == {then}


def test_a_retry_gets_a_fresh_15_minutes(payment: Chart) -> None:
    sim = paying(payment)
    sim.advance(10 * MINUTE)
    applied(sim.send("PAY_FAILED", {"code": "declined"}))
    sim.advance(2 * MINUTE)
    applied(sim.send("RETRY_PAY", {}))
    assert sim.next_due_ms == T0 + 12 * MINUTE + TIMEOUT
    assert sim.advance(TIMEOUT - 1) == []
    assert sim.state.configuration == {"processing"}
    [closed] = sim.advance(1)
    applied(closed)
    assert sim.state.configuration == {"closed"}
    assert [m.payload["attempts"] for m in closed.emitted if m.type == "PaymentTimedOut"] == [2]

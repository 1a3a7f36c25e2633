"""The four fault experiments of the task domain, on SQLite and on PostgreSQL.

1. a duplicate event ID: same payload → duplicate, changed payload →
   EVENT_ID_PAYLOAD_CONFLICT, one row only;
2. cancel and complete racing from the same version: one commits, the other
   gets VERSION_CONFLICT, re-reads and is re-decided by the chart, the race
   recorded; with a cancel-wins chart the race ends cancelled whatever the order;
3. out-of-order delivery: SEQUENCE_GAP, nothing lost; a new ID at an occupied
   sequence is a history conflict;
4. snapshot corruption: a tampered snapshot is refused by its hash; a
   consistent but wrong one is found by full replay.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from runner_charts import JOB_CANCEL_WINS, MACHINES, chart_from

import statekit
from statekit.runner.outcome import Outcome, OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.snapshots import ENGINE_VERSION
from statekit.runner.store import open_store

APPLIED, ALREADY = OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED
REJECTED, CONFLICT = OutcomeStatus.REJECTED, OutcomeStatus.CONFLICT
SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

# Nine real task events: attempt 1 fails (retryable), attempt 2 fails too after its
# upload, attempt 3 uploads and verifies its artifact. The task is running at version 9.
TASK_HISTORY: list[Command] = [
    ("s1", "TaskStarted", {"attempt": 1, "worker_id": "w1", "lease_until_ms": 1000}),
    ("u1", "ArtifactUploaded", {"attempt": 1, "sha256": SHA}),
    ("f1", "TaskFailed", {"attempt": 1, "error": "disk full", "retryable": True}),
    ("s2", "TaskStarted", {"attempt": 2, "worker_id": "w2", "lease_until_ms": 2000}),
    ("u2", "ArtifactUploaded", {"attempt": 2, "sha256": SHA}),
    ("f2", "TaskFailed", {"attempt": 2, "error": "worker lost", "retryable": True}),
    ("s3", "TaskStarted", {"attempt": 3, "worker_id": "w3", "lease_until_ms": 3000}),
    ("u3", "ArtifactUploaded", {"attempt": 3, "sha256": SHA}),
    ("v3", "ArtifactVerified", {"attempt": 3, "sha256": SHA}),
]
Command = tuple[str, str, dict[str, Any]]
COMPLETE: Command = ("evt-complete", "TaskCompleted", {"attempt": 3})
CANCEL: Command = ("evt-cancel", "TaskCancelled", {"requested_by": "ops"})


def task_runner(url: str) -> Runner:
    runner = Runner(statekit.load(MACHINES / "task.yaml"), open_store(url))
    runner.create("task-1")
    for n, (event_id, kind, payload) in enumerate(TASK_HISTORY):
        assert runner.apply("task-1", event_id, kind, payload, expected_version=n).applied
    return runner


# ---- 1. duplicate event ID ------------------------------------------------------------
def test_duplicate_event_id(store_url: str) -> None:
    runner = task_runner(store_url)
    first = runner.apply("task-1", "evt-complete", "TaskCompleted", {"attempt": 3})
    assert (first.status, first.version) == (APPLIED, 10)
    again = runner.apply("task-1", "evt-complete", "TaskCompleted", {"attempt": 3})
    assert (again.status, again.duplicate, again.sequence, again.version) == (ALREADY, True, 10, 10)
    changed = runner.apply("task-1", "evt-complete", "TaskCompleted", {"attempt": 2})
    assert (changed.status, changed.reason) == (CONFLICT, "EVENT_ID_PAYLOAD_CONFLICT")
    assert changed.conflict is not None and changed.conflict.sequence == 10
    assert changed.version == 10 and runner.load("task-1").version == 10
    rows = runner.store.execute(
        "SELECT COUNT(*) FROM statekit_events WHERE instance_id = ? AND event_id = ?",
        ("task-1", "evt-complete"),
    ).fetchone()
    assert rows[0] == 1
    [audit] = runner.rejections("task-1")
    assert audit["reason"] == "EVENT_ID_PAYLOAD_CONFLICT" and audit["payload"] == {"attempt": 2}
    assert runner.verify("task-1").ok


# ---- 2. cancel and complete racing ----------------------------------------------------
def race(runner: Runner, first: Command, second: Command) -> tuple[Outcome, Outcome, Outcome]:
    """Both commands decided at version 9; `first` commits, `second` conflicts, re-reads
    and is re-decided with the conflict recorded."""
    base = runner.load("task-1").version
    won = runner.apply("task-1", *first, expected_version=base)
    lost = runner.apply("task-1", *second, expected_version=base)
    assert lost.conflict is not None
    current = runner.load("task-1")
    redecided = runner.apply(
        "task-1", *second, expected_version=current.version, after_conflict=lost.conflict
    )
    return won, lost, redecided


def test_complete_beats_cancel_on_the_task_chart(store_url: str) -> None:
    runner = task_runner(store_url)
    won, lost, redecided = race(runner, COMPLETE, CANCEL)
    assert (won.status, won.version) == (APPLIED, 10)
    assert (lost.status, lost.reason, lost.version) == (CONFLICT, "VERSION_CONFLICT", 10)
    assert lost.conflict is not None
    assert (lost.conflict.expected_version, lost.conflict.event_id) == (9, "evt-complete")
    assert (redecided.status, redecided.reason) == (REJECTED, "TASK_COMPLETED")
    assert redecided.race == lost.conflict
    final = runner.load("task-1")
    assert final.version == 10 and final.state.is_active("lifecycle.completed")
    [audit] = runner.rejections("task-1")
    assert audit["event_id"] == "evt-cancel"
    assert audit["detail"]["race"] == {
        "reason": "VERSION_CONFLICT",
        "expected_version": 9,
        "version": 10,
        "event_id": "evt-complete",
        "sequence": 10,
    }
    assert runner.verify("task-1").ok


def test_on_the_task_chart_the_first_commit_decides(store_url: str) -> None:
    # task.yaml is "first commit wins": a cancel that commits first leaves the task
    # cancelling, and the completion is refused while the cancellation is in progress.
    runner = task_runner(store_url)
    won, _, redecided = race(runner, CANCEL, COMPLETE)
    assert won.version == 10 and won.state.is_active("lifecycle.cancelling")
    assert (redecided.status, redecided.reason) == (REJECTED, "CANCELLATION_IN_PROGRESS")


def job_runner(url: str) -> Runner:
    runner = Runner(chart_from(JOB_CANCEL_WINS), open_store(url))
    runner.create("task-1")
    runner.apply("task-1", "start", "JobStarted", expected_version=0)
    for n in range(1, 9):
        runner.apply("task-1", f"p{n}", "JobProgressed", {"percent": n * 10}, expected_version=n)
    assert runner.load("task-1").version == 9
    return runner


JOB_Command = tuple[str, str, dict[str, Any]]
JOB_COMPLETE: Command = ("evt-complete", "JobCompleted", {})
JOB_CANCEL: Command = ("evt-cancel", "JobCancelled", {"requested_by": "ops"})


def test_cancel_wins_chart_ends_cancelled_when_complete_commits_first(store_url: str) -> None:
    runner = job_runner(store_url)
    won, lost, redecided = race(runner, JOB_COMPLETE, JOB_CANCEL)
    assert won.version == 10 and won.state.configuration == {"completed"}
    assert lost.reason == "VERSION_CONFLICT"
    assert (redecided.status, redecided.version) == (APPLIED, 11)
    assert redecided.state.configuration == {"cancelled"}
    assert [m.type for m in redecided.emitted] == ["CompletionRevoked"]
    last = runner.history("task-1")[-1]
    assert last.event_id == "evt-cancel"
    assert last.evidence["race"]["event_id"] == "evt-complete"
    assert runner.verify("task-1").ok


def test_cancel_wins_chart_ends_cancelled_when_cancel_commits_first(store_url: str) -> None:
    runner = job_runner(store_url)
    won, _, redecided = race(runner, JOB_CANCEL, JOB_COMPLETE)
    assert won.state.configuration == {"cancelled"}
    assert (redecided.status, redecided.reason) == (REJECTED, "JOB_CANCELLED")
    assert runner.load("task-1").state.configuration == {"cancelled"}


@pytest.mark.parametrize("chart", ["task", "cancel-wins"])
def test_a_real_race_between_two_connections(store_url: str, chart: str) -> None:
    """Two threads with their own connections decide at version 9 and commit at once:
    exactly one wins version 10; the loser is re-decided by the chart."""
    runner = task_runner(store_url) if chart == "task" else job_runner(store_url)
    commands = (COMPLETE, CANCEL) if chart == "task" else (JOB_COMPLETE, JOB_CANCEL)
    barrier = threading.Barrier(2)
    outcomes: dict[str, Outcome] = {}

    def worker(command: Command) -> Callable[[], None]:
        def run() -> None:
            mine = Runner(runner.chart, open_store(store_url))
            barrier.wait()
            outcomes[command[0]] = mine.apply("task-1", *command, expected_version=9)
            mine.store.close()

        return run

    threads = [threading.Thread(target=worker(c)) for c in commands]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(o.status.value for o in outcomes.values())
    assert statuses == ["APPLIED", "CONFLICT"]
    [winner] = [k for k, o in outcomes.items() if o.applied]
    [loser] = [c for c in commands if c[0] != winner]
    conflict = outcomes[loser[0]].conflict
    assert conflict is not None and conflict.event_id == winner
    current = runner.load("task-1")
    runner.apply("task-1", *loser, expected_version=current.version, after_conflict=conflict)
    final = runner.load("task-1").state
    if chart == "cancel-wins":
        assert final.configuration == {"cancelled"}
    elif winner == "evt-complete":
        assert final.is_active("lifecycle.completed")
    else:
        assert final.is_active("lifecycle.cancelling")
    assert runner.verify("task-1").ok


# ---- 3. out-of-order delivery ---------------------------------------------------------
def test_out_of_order_delivery(store_url: str) -> None:
    runner = Runner(statekit.load(MACHINES / "task.yaml"), open_store(store_url))
    runner.create("task-1")
    events = [(f"e{n + 1}", kind, payload) for n, (_, kind, payload) in enumerate(TASK_HISTORY)]
    assert runner.apply("task-1", *events[0], sequence=1).applied
    gap = runner.apply("task-1", *events[2], sequence=3)
    assert (gap.status, gap.reason, gap.missing, gap.version) == (
        CONFLICT,
        "SEQUENCE_GAP",
        (2, 2),
        1,
    )
    assert runner.load("task-1").version == 1 and len(runner.history("task-1")) == 1
    assert runner.rejections("task-1") == []  # a gap is not an anomaly: nothing recorded
    assert runner.apply("task-1", *events[1], sequence=2).version == 2
    assert runner.apply("task-1", *events[2], sequence=3).version == 3  # redelivered, applies
    taken = runner.apply("task-1", "intruder", "TaskCancelled", {"requested_by": "x"}, sequence=2)
    assert (taken.status, taken.reason) == (CONFLICT, "DUPLICATE_OR_OLD_SEQUENCE")
    assert taken.conflict is not None and taken.conflict.event_id == "e2"
    [audit] = runner.rejections("task-1")
    assert audit["event_id"] == "intruder" and audit["detail"]["event_id"] == "e2"
    # a redelivery of an event that holds its sequence is a plain duplicate
    dup = runner.apply("task-1", *events[1], sequence=2)
    assert (dup.status, dup.duplicate) == (ALREADY, True)
    assert [e.event_id for e in runner.history("task-1")] == ["e1", "e2", "e3"]
    assert runner.verify("task-1").ok


# ---- 4. snapshot corruption -----------------------------------------------------------
def test_snapshot_corruption(store_url: str) -> None:
    runner = Runner(statekit.load(MACHINES / "task.yaml"), open_store(store_url), snapshot_every=4)
    runner.create("task-1")
    for n, (event_id, kind, payload) in enumerate(TASK_HISTORY):
        runner.apply("task-1", event_id, kind, payload, expected_version=n)
    assert [s.through_sequence for s in runner.store.snapshots("task-1")] == [8, 4]
    stored = runner.load("task-1").state
    rebuilt = runner.rebuild("task-1")
    assert (rebuilt.snapshot, rebuilt.replayed, rebuilt.refused) == (8, 1, ())
    assert rebuilt.state == stored and runner.verify("task-1").ok

    # tampered state text, hash left as it was: refused by its hash, rebuilt from older
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_snapshots SET state = REPLACE(state, '\"attempt\":3', "
            "'\"attempt\":2') WHERE instance_id = ? AND through_sequence = 8",
            ("task-1",),
        )
    rebuilt = runner.rebuild("task-1")
    assert rebuilt.snapshot == 4 and rebuilt.state == stored
    assert len(rebuilt.refused) == 1 and "sha256 does not match" in rebuilt.refused[0]
    report = runner.verify("task-1")
    assert not report.ok and report.differences == ()
    assert "snapshot at 8" in report.snapshot_problems[0]

    # consistent but wrong: the state after 3 events stored (with its own hash) as the
    # state after 4; loading trusts it, full replay finds it.
    early = runner.chart.replay([(k, p) for _, k, p in TASK_HISTORY[:3]]).state
    runner.store.execute("DELETE FROM statekit_snapshots WHERE through_sequence = 8")
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_snapshots SET state = ?, state_sha256 = ? WHERE through_sequence = 4",
            (early.to_json(), _sha(early.to_json())),
        )
    rebuilt = runner.rebuild("task-1")
    assert rebuilt.snapshot == 4 and rebuilt.refused == ()
    # the wrong base makes event 5 inapplicable: the rebuild stops there and says so
    assert rebuilt.state != stored
    assert rebuilt.problems == (
        "event #5 (u2, ArtifactUploaded): recorded APPLIED, replay says REJECTED "
        "(TASK_NOT_RUNNING)",
    )
    report = runner.verify("task-1")
    assert report.differences == ()  # the stored state itself equals the replay
    [problem] = report.snapshot_problems
    assert problem.startswith("snapshot at 4 differs from the replay")
    # the report names both sides of every difference: the configuration and the context
    assert "snapshot ['lifecycle', 'lifecycle.queued'," in problem
    assert "replayed ['lifecycle', 'lifecycle.running'," in problem
    assert "context.attempt: snapshot 1, replayed 2" in problem

    # a snapshot of another chart digest or engine version is refused too
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_snapshots SET state = ?, state_sha256 = ?, engine_version = ? "
            "WHERE through_sequence = 4",
            (stored.to_json(), _sha(stored.to_json()), "statekit-0.0.1/state-1"),
        )
    assert "made by engine statekit-0.0.1" in runner.rebuild("task-1").refused[0]
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_snapshots SET chart_digest = 'sha256:0', engine_version = ?",
            (ENGINE_VERSION,),
        )
    refused = runner.rebuild("task-1")
    assert "chart digest sha256:0" in refused.refused[0] and refused.snapshot is None
    assert refused.state == stored


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()

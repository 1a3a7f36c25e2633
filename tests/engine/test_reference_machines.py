"""The reference machines run as machines/README.md says: task, payment (all 49
state-event pairs), media player (history, eventless transitions, raise)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from chart_helpers import machine

import statekit
from statekit.engine.chart import Chart
from statekit.engine.result import TERMINAL_STATE, Status
from statekit.engine.state import State

MACHINES = Path(__file__).resolve().parents[2] / "machines"


@pytest.fixture(scope="module")
def task() -> Chart:
    return statekit.load(MACHINES / "task.yaml")


@pytest.fixture(scope="module")
def payment() -> Chart:
    return statekit.load(MACHINES / "payment.yaml")


@pytest.fixture(scope="module")
def player() -> Chart:
    return statekit.load(MACHINES / "media_player.yaml")


def run(chart: Chart, *events: tuple[str, dict[str, Any] | None]) -> State:
    """Send events that must all apply; the final state."""
    state = chart.start()
    for event, payload in events:
        result = chart.send(state, event, payload)
        assert result.status is Status.APPLIED, (event, result.reason, result.message)
        state = result.state
    return state


# ---- task ------------------------------------------------------------------------------

START = ("TaskStarted", {"attempt": 1, "worker_id": "w-1", "lease_until_ms": 1000})
CANCEL = ("TaskCancelled", {"requested_by": "ann"})
RECONCILED = ("EffectsReconciled", {"attempt": 1})
UPLOADED = ("ArtifactUploaded", {"attempt": 1, "sha256": "abc"})
VERIFIED = ("ArtifactVerified", {"attempt": 1, "sha256": "abc"})
COMPLETED = ("TaskCompleted", {"attempt": 1})

GENERIC_TASK = """
statechart: generic_task
events:
  TaskStarted: {}
  TaskCancelled: {}
  TaskCompleted: {}
initial: queued
states:
  queued: {on: {TaskStarted: running, TaskCancelled: cancelled}}
  running: {on: {TaskCancelled: cancelling, TaskCompleted: completed}}
  cancelling:
    description: The completion raced the cancel and won.
    on: {TaskCompleted: completed}
  completed: {final: true}
  cancelled: {final: true}
"""


def test_a_late_cancel_after_completion_is_terminal_state() -> None:
    # The history, on a chart whose final states classify nothing.
    chart = machine(GENERIC_TASK)
    state = run(chart, ("TaskStarted", None), ("TaskCancelled", None), ("TaskCompleted", None))
    assert state.configuration == {"completed"} and state.is_final
    late = chart.send(state, "TaskCancelled")
    assert (late.status, late.reason) == (Status.REJECTED, TERMINAL_STATE)
    assert late.state is state


def test_task_cancel_while_running_waits_for_reconciliation(task: Chart) -> None:
    cancelling = run(task, START, CANCEL)
    assert cancelling.leaves == (
        "lifecycle.cancelling",
        "cancellation.requested",
        "artifact.absent",
    )
    late = task.send(cancelling, *COMPLETED)
    assert (late.status, late.reason) == (Status.REJECTED, "CANCELLATION_IN_PROGRESS")
    result = task.send(cancelling, *RECONCILED)
    assert result.state.leaves == (
        "lifecycle.cancelled",
        "cancellation.reconciled",
        "artifact.discarded",
    )
    assert result.state.is_final
    assert [m.type for m in result.emitted] == ["TaskCancelledNotice"]
    assert [m.event for m in result.evidence] == ["EffectsReconciled", None]
    # task.yaml's final states classify every late event themselves:
    assert task.send(result.state, *CANCEL).status is Status.ALREADY_APPLIED
    assert task.send(result.state, *START).reason == "TASK_CANCELLED"


def test_task_late_cancel_after_completion_is_classified_by_the_final_state(task: Chart) -> None:
    done = run(task, START, UPLOADED, VERIFIED, COMPLETED)
    assert done.leaves == ("lifecycle.completed", "cancellation.not_needed", "artifact.verified")
    late = task.send(done, *CANCEL)
    assert (late.status, late.reason) == (Status.REJECTED, "TASK_COMPLETED")
    assert task.send(done, *COMPLETED).status is Status.ALREADY_APPLIED


def test_task_cancellation_before_start_cancels_directly(task: Chart) -> None:
    result = task.send(task.start(), *CANCEL)
    assert result.status is Status.APPLIED
    assert result.state.leaves == (
        "lifecycle.cancelled",
        "cancellation.reconciled",
        "artifact.discarded",
    )
    assert len(result.evidence) == 1 and result.state.is_final
    assert [m.type for m in result.emitted] == ["TaskCancelledNotice"]
    assert result.state.context["cancelled_by"] == "ann"


def test_task_fencing_and_retry_budget(task: Chart) -> None:
    running = run(task, START)
    stale = task.send(running, "TaskCompleted", {"attempt": 0})
    assert stale.reason == "STALE_ATTEMPT"
    twice = task.send(running, *START)
    assert twice.reason == "TASK_ALREADY_RUNNING"
    fail = {"error": "boom", "retryable": True}
    state = running
    for attempt in (1, 2):
        state = task.send(state, "TaskFailed", {"attempt": attempt, **fail}).state
        assert state.leaves[0] == "lifecycle.queued"
        skipped = task.send(state, "TaskStarted", {**START[1], "attempt": attempt + 2})
        assert skipped.reason == "ATTEMPT_OUT_OF_ORDER"
        state = task.send(state, "TaskStarted", {**START[1], "attempt": attempt + 1}).state
    last = task.send(state, "TaskFailed", {"attempt": 3, **fail})
    assert last.state.leaves[0] == "lifecycle.failed" and last.state.is_final
    assert [m.type for m in last.emitted] == ["TaskFailedNotice"]


def test_task_completion_needs_the_attempts_verified_artifact(task: Chart) -> None:
    uploaded = run(task, START, UPLOADED)
    early = task.send(uploaded, *COMPLETED)
    assert early.reason == "ARTIFACT_NOT_VERIFIED"
    mismatch = task.send(uploaded, "ArtifactVerified", {"attempt": 1, "sha256": "xyz"})
    assert mismatch.reason == "CHECKSUM_MISMATCH"


# ---- payment: all 49 pairs ------------------------------------------------------------

STATES = ("created", "processing", "success", "failed", "refunding", "refunded", "closed")
EVENTS = (
    "START_PAY",
    "PAY_SUCCESS",
    "PAY_FAILED",
    "RETRY_PAY",
    "START_REFUND",
    "REFUND_SUCCESS",
    "CLOSE",
)
PAYLOADS: dict[str, dict[str, Any] | None] = {
    "START_PAY": {"amount": 100},
    "PAY_SUCCESS": {"channel_ref": "ch-2"},
    "PAY_FAILED": {"code": "TIMEOUT"},
    "RETRY_PAY": None,
    "START_REFUND": {"amount": 30, "requester": "support"},
    "REFUND_SUCCESS": {"refund_ref": "rf-2"},
    "CLOSE": None,
}
# How each state is reached through real events.
PATHS: dict[str, tuple[tuple[str, dict[str, Any] | None], ...]] = {
    "created": (),
    "processing": (("START_PAY", {"amount": 100}),),
    "success": (("START_PAY", {"amount": 100}), ("PAY_SUCCESS", {"channel_ref": "ch-1"})),
    "failed": (("START_PAY", {"amount": 100}), ("PAY_FAILED", {"code": "DECLINED"})),
    "refunding": (
        ("START_PAY", {"amount": 100}),
        ("PAY_SUCCESS", {"channel_ref": "ch-1"}),
        ("START_REFUND", {"amount": 40, "requester": "user"}),
    ),
    "refunded": (
        ("START_PAY", {"amount": 100}),
        ("PAY_SUCCESS", {"channel_ref": "ch-1"}),
        ("START_REFUND", {"amount": 40, "requester": "user"}),
        ("REFUND_SUCCESS", {"refund_ref": "rf-1"}),
    ),
    "closed": (
        ("START_PAY", {"amount": 100}),
        ("PAY_SUCCESS", {"channel_ref": "ch-1"}),
        ("CLOSE", None),
    ),
}
A, AA = "APPLIED → ", "ALREADY_APPLIED"
NS, NR, IP = "PAYMENT_NOT_STARTED", "NO_REFUND_IN_PROGRESS", "PAYMENT_IN_PROGRESS"
RP, PR, PC = "REFUND_IN_PROGRESS", "PAYMENT_REFUNDED", "PAYMENT_CLOSED"
# machines/README.md, "The intended outcome of every pair" (rows: states, columns: EVENTS).
INTENDED = {
    "created": (A + "processing", NS, NS, NS, "NOTHING_TO_REFUND", NR, A + "closed"),
    "processing": (AA, A + "success", A + "failed", IP, IP, NR, IP),
    "success": (AA, AA, "CONFLICTING_RESULT", "ALREADY_PAID", A + "refunding", NR, A + "closed"),
    "failed": (
        "PAYMENT_FAILED_USE_RETRY",
        A + "success",
        AA,
        A + "processing",
        "NOTHING_TO_REFUND",
        NR,
        A + "closed",
    ),
    "refunding": (
        RP,
        "LATE_SUCCESS_AFTER_REFUND",
        "CONFLICTING_RESULT",
        RP,
        RP,
        A + "refunded",
        RP,
    ),
    "refunded": (
        PR,
        "LATE_SUCCESS_AFTER_REFUND",
        "CONFLICTING_RESULT",
        PR,
        A + "refunding",
        AA,
        A + "closed",
    ),
    "closed": (PC, "LATE_SUCCESS_AFTER_CLOSE", PC, PC, PC, PC, AA),
}


def test_the_encoded_table_is_the_one_in_the_machines_readme() -> None:
    text = (MACHINES / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in STATES and len(cells) == 8:
            rows[cells[0]] = tuple(re.sub(r"^REJECTED ", "", c) for c in cells[1:])
    assert rows == INTENDED


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("state_name", STATES)
def test_every_payment_pair_has_its_intended_outcome(
    payment: Chart, state_name: str, event: str
) -> None:
    state = run(payment, *PATHS[state_name])
    assert state.configuration == {state_name}
    expected = INTENDED[state_name][EVENTS.index(event)]
    result = payment.send(state, event, PAYLOADS[event])
    if expected.startswith(A):
        assert result.status is Status.APPLIED, (result.reason, result.message)
        assert result.state.configuration == {expected.removeprefix(A)}
    elif expected == AA:
        assert result.status is Status.ALREADY_APPLIED
        assert result.state is state and result.emitted == () and result.evidence == ()
    else:
        assert (result.status, result.reason) == (Status.REJECTED, expected)
        assert result.state is state and result.emitted == ()


def test_a_duplicate_payment_success_is_already_applied_with_no_effects(payment: Chart) -> None:
    processing = run(payment, *PATHS["processing"])
    first = payment.send(processing, "PAY_SUCCESS", {"channel_ref": "ch-1"}, event_id="e1")
    assert [m.message_id for m in first.emitted] == ["e1/0"]
    duplicate = payment.send(first.state, "PAY_SUCCESS", {"channel_ref": "ch-1"}, event_id="e2")
    assert duplicate.status is Status.ALREADY_APPLIED
    assert duplicate.state is first.state
    assert duplicate.emitted == () and duplicate.evidence == ()


def test_payment_guarded_cells_reject_with_the_guards_reason(payment: Chart) -> None:
    assert payment.send(payment.start(), "START_PAY", {"amount": 0}).reason == "INVALID_AMOUNT"
    success = run(payment, *PATHS["success"])
    refund = {"amount": 101, "requester": "user"}
    assert payment.send(success, "START_REFUND", refund).reason == "REFUND_EXCEEDS_REFUNDABLE"
    state = run(payment, *PATHS["failed"])
    for _ in range(2):  # attempts 2 and 3
        state = payment.send(state, "RETRY_PAY").state
        state = payment.send(state, "PAY_FAILED", {"code": "X"}).state
    assert payment.send(state, "RETRY_PAY").reason == "RETRY_LIMIT_REACHED"
    full = run(
        payment, *PATHS["success"][:2], ("START_REFUND", {"amount": 100, "requester": "user"})
    )
    full = payment.send(full, "REFUND_SUCCESS", {"refund_ref": "r"}).state
    again = payment.send(full, "START_REFUND", {"amount": 1, "requester": "user"})
    assert again.reason == "REFUND_EXCEEDS_REFUNDABLE"
    assert full.context["refunded"] == 100 and full.context["refundable"] == 0


# ---- media player ----------------------------------------------------------------------

ON = ("POWER_ON", None)
PLAY = ("PLAY_QUEUE", {"tracks": 2})


def test_player_deep_history_restores_every_region_of_the_session(player: Chart) -> None:
    state = run(player, ON, PLAY, ("PAUSE", None), ("MUTE", None), ("QUALITY_DOWN", None))
    session = state.leaves
    assert session == (
        "powered.main.playback.session.transport.paused",
        "powered.main.playback.session.volume.muted",
        "powered.main.playback.session.quality.sd",
    )
    settings = player.send(state, "OPEN_SETTINGS").state
    assert settings.leaves == ("powered.settings",)
    assert settings.context["muted"] is False  # muted's exit effect ran
    back = player.send(settings, "CLOSE_SETTINGS").state
    assert back.leaves == session
    assert back.context["muted"] is True  # and its entry effect again
    assert set(back.history["powered.main.resume"]) == set(session)


def test_player_shallow_history_returns_to_the_library_view_left(player: Chart) -> None:
    searching = run(player, ON, ("SEARCH", {"query": "bach"}))
    playing = player.send(searching, *PLAY).state
    result = player.send(playing, "STOP")
    assert result.state.leaves == ("powered.main.library.searching",)
    events = [m.event for m in result.evidence]
    assert events == ["STOP", "done.state.powered.main.playback"]


def test_player_raise_is_processed_in_the_same_macrostep(player: Chart) -> None:
    playing = run(player, ON, PLAY)
    stalled = player.send(playing, "STALLED")
    assert stalled.state.leaves == (
        "powered.main.playback.session.transport.buffering",
        "powered.main.playback.session.volume.audible",
        "powered.main.playback.session.quality.sd",
    )
    assert [m.event for m in stalled.evidence] == ["STALLED", "QUALITY_DOWN"]
    assert stalled.state.context["stalls"] == 1
    full = player.send(stalled.state, "BUFFER_PROGRESS", {"pct": 100})
    assert [m.event for m in full.evidence] == ["BUFFER_PROGRESS", None]  # eventless resume
    assert full.state.leaves[0] == "powered.main.playback.session.transport.playing"


def test_player_eventless_transitions(player: Chart) -> None:
    playing = run(player, ON, PLAY)
    silent = player.send(playing, "SET_VOLUME", {"level": 0}).state
    assert "powered.main.playback.session.volume.muted" in silent.leaves
    assert silent.context["muted"] is True
    ended = player.send(player.send(playing, "TRACK_ENDED").state, "TRACK_ENDED")
    assert ended.state.leaves == ("powered.main.library.browsing",)
    assert [m.event for m in ended.evidence] == [
        "TRACK_ENDED",
        None,
        "done.state.powered.main.playback",
    ]


def test_player_critical_battery_switches_off_and_power_on_resumes(player: Chart) -> None:
    playing = run(player, ON, PLAY, ("PAUSE", None))
    low = player.send(playing, "BATTERY_LEVEL", {"pct": 1})
    assert low.state.leaves == ("off",)
    assert player.send(low.state, *ON).reason == "BATTERY_TOO_LOW"
    assert player.send(low.state, "PAUSE").reason == "POWERED_OFF"
    charged = player.send(low.state, "BATTERY_LEVEL", {"pct": 80}).state
    resumed = player.send(charged, *ON).state
    assert resumed.leaves[0] == "powered.main.playback.session.transport.paused"
    assert resumed.context["boots"] == 2

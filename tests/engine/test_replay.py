"""Replay folds a history; it stops at the first event that does not apply, never skipping."""

from __future__ import annotations

from pathlib import Path

import pytest

import statekit
from statekit.engine.replay import Event, EventLike, ReplayError, as_event, replay
from statekit.engine.result import Status

MACHINES = Path(__file__).resolve().parents[2] / "machines"


@pytest.fixture(scope="module")
def payment() -> statekit.Chart:
    return statekit.load(MACHINES / "payment.yaml")


HISTORY: list[EventLike] = [
    Event("START_PAY", {"amount": 100}, "e1"),
    ("PAY_SUCCESS", {"channel_ref": "ch"}),
    ("PAY_SUCCESS", {"channel_ref": "ch"}, "e3"),  # ALREADY_APPLIED: folded, changes nothing
    ("START_REFUND", {"amount": 10, "requester": "user"}),
]


def test_replay_folds_every_event(payment: statekit.Chart) -> None:
    result = payment.replay(HISTORY)
    assert result.ok and result.applied == 4
    assert result.state.configuration == {"refunding"}
    assert replay(payment, HISTORY) == result.state
    live = payment.start()
    for item in HISTORY:
        event = as_event(item)
        live = payment.send(live, event.type, event.payload).state
    assert live == result.state


def test_replay_stops_at_the_first_rejection_and_says_why(payment: statekit.Chart) -> None:
    history: list[EventLike] = [*HISTORY, ("CLOSE",), ("REFUND_SUCCESS", {"refund_ref": "r"})]
    result = payment.replay(history)
    assert not result.ok
    assert (result.stopped_at, result.applied) == (4, 4)
    assert result.stopped_event == Event("CLOSE")
    assert result.rejection is not None and result.rejection.reason == "REFUND_IN_PROGRESS"
    assert result.state.configuration == {"refunding"}
    with pytest.raises(ReplayError) as caught:
        replay(payment, history)
    assert caught.value.index == 4 and caught.value.result.status is Status.REJECTED
    assert "event #4 (CLOSE) does not apply: REFUND_IN_PROGRESS" in str(caught.value)


def test_replay_from_a_given_state(payment: statekit.Chart) -> None:
    middle = payment.replay(HISTORY[:2]).state
    assert payment.replay(HISTORY[2:], state=middle).state == payment.replay(HISTORY).state


def test_replay_refuses_items_that_are_not_events(payment: statekit.Chart) -> None:
    with pytest.raises(TypeError, match="history item"):
        payment.replay([42])  # type: ignore[list-item]

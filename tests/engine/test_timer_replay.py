"""Replay and JSON carry timers exactly: random event/advance sequences on charts with time
replay to the same state (timers, due times, generations), every state visited survives
`to_json`/`from_json`, and malformed timer entries are each a `StateFormatError`."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from chart_helpers import machine
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_timers import LEASE, SENDS, TRANSIENT

import statekit
from statekit.testing import Simulator

TIES = """
statechart: ties
events: {Go: {}, Stop: {}, Tick: {n: {type: integer}}}
parallel: true
states:
  left:
    initial: l0
    states:
      l0: {on: {Go: l1}}
      l1:
        after: {5s: {to: l0, do: [{send: {event: Tick, payload: {n: 9}}}]}}
        on: {Stop: l0}
  right:
    initial: r0
    states:
      r0:
        on:
          Go:
            to: r1
            do:
              - {send: {event: Tick, payload: {n: 1}, delay: 3s, id: t}}
              - {send: {event: Tick, payload: {n: 2}, delay: 5s}}
      r1:
        after: {2s: {to: r0, if: "active('left.l1')", else: LEFT_IDLE}}
        on: {Tick: {do: [{cancel: t}]}}
"""
CHARTS = {
    "lease": (LEASE, ["TaskStarted", "TaskDone", "Restart"]),
    "sends": (SENDS, ["Arm", "ArmAgain", "Cancel", "Leave", "Now", "Zero"]),
    "transient": (TRANSIENT, ["Go", "Ping"]),
    "ties": (TIES, ["Go", "Stop"]),
}
_CHARTS = {name: machine(text) for name, (text, _events) in CHARTS.items()}

actions = st.lists(
    st.one_of(
        st.tuples(st.just("send"), st.integers(0, 5)),
        st.tuples(st.just("advance"), st.sampled_from([0, 1, 999, 1_000, 2_000, 5_000, 31_000])),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(CHARTS)), start=st.integers(0, 10**12), steps=actions)
def test_replay_reproduces_the_armed_timers_exactly(
    name: str, start: int, steps: list[tuple[str, int]]
) -> None:
    chart, events = _CHARTS[name], CHARTS[name][1]
    sim = Simulator(chart, now_ms=start)
    visited = [sim.state]
    for kind, value in steps:
        if kind == "send":
            event = events[value % len(events)]
            sim.send(event, {"who": "x"} if event == "Reminder" else None)
        else:
            sim.advance(value)
        visited.append(sim.state)
    replayed = chart.replay(sim.history, state=sim.start_state)
    assert replayed.ok, replayed.rejection
    assert replayed.state == sim.state
    assert replayed.state.timers == sim.state.timers
    assert replayed.state.timer_generation == sim.state.timer_generation
    for state in visited:
        again = statekit.State.from_json(chart, state.to_json())
        assert again == state and again.timers == state.timers and hash(again) == hash(state)
        assert again.to_json() == state.to_json()


def test_a_replayed_consumed_delivery_is_folded_and_a_stale_one_stops() -> None:
    chart = _CHARTS["ties"]
    sim = Simulator(chart, now_ms=0)
    sim.send("Go")
    sim.send("Stop")  # left back to l0, right stays in r1: its timer's guard will fail
    fired = sim.advance(2_000)
    assert [r.reason for r in fired] == ["LEFT_IDLE"]
    replayed = chart.replay(sim.history, state=sim.start_state)
    assert replayed.ok and replayed.state == sim.state
    stale = statekit.Event("after(2s)@right.r1", timer="after(2s)@right.r1", generation=1, now_ms=0)
    again = chart.replay([*sim.history, stale], state=sim.start_state)
    assert not again.ok and again.rejection is not None
    assert again.rejection.reason == "STALE_TIMER"


def _states() -> tuple[statekit.Chart, dict[str, Any], statekit.Chart, dict[str, Any]]:
    sends = _CHARTS["sends"]
    armed = sends.send(sends.start(), "Arm", now_ms=5).state  # a send timer with an id
    lease = _CHARTS["lease"]
    running = lease.send(lease.start(), "TaskStarted", now_ms=5).state  # an after timer
    return sends, armed.to_data(), lease, running.to_data()


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(data)
        target: Any = out
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return out

    return change


_DELETE = object()
T0 = ("timers", 0)
MALFORMED_SEND = {
    "timers not a list": _set(("timers",), {"r": 1}),
    "generation missing": _set(("timer_generation",), _DELETE),
    "timers missing": _set(("timers",), _DELETE),
    "generation zero": _set(("timer_generation",), 0),
    "generation negative": _set(("timer_generation",), -1),
    "generation a string": _set(("timer_generation",), "1"),
    "generation a boolean": _set(("timer_generation",), True),
    "generation too big": _set(("timer_generation",), 2**63),
    "entry not an object": _set(T0, ["r"]),
    "entry missing a key": _set((*T0, "owner"), _DELETE),
    "entry with an extra key": _set((*T0, "extra"), 1),
    "id not a string": _set((*T0, "id"), 7),
    "event not a string": _set((*T0, "event"), None),
    "undeclared event": _set((*T0, "event"), "Nope"),
    "id no send arms": _set((*T0, "id"), "other"),
    "id of another event's send": _set((*T0, "event"), "Arm"),
    "payload wrong type": _set((*T0, "payload", "n"), "seven"),
    "payload unknown field": _set((*T0, "payload", "zzz"), 1),
    "payload missing field": _set((*T0, "payload", "who"), _DELETE),
    "payload not an object": _set((*T0, "payload"), [1]),
    "no delay nor due": lambda d: _set((*T0, "due_ms"), None)(_set((*T0, "delay_ms"), None)(d)),
    "delay a float": _set((*T0, "delay_ms"), 1.5),
    "delay a boolean": _set((*T0, "delay_ms"), True),
    "delay beyond 64 bits": _set((*T0, "delay_ms"), 2**64),
    "due a string": _set((*T0, "due_ms"), "soon"),
    "generation of the entry not an integer": _set((*T0, "generation"), "1"),
    "generation after the counter": _set((*T0, "generation"), 2),
    "generation zero in the entry": _set((*T0, "generation"), 0),
    "a timer event name as send id": _set((*T0, "id"), "after(30s)@running"),
    "owned by a state": _set((*T0, "owner"), "b"),
}
MALFORMED_AFTER = {
    "unknown after timer": _set((*T0, "id"), "after(31s)@running"),
    "event differs from id": _set((*T0, "event"), "TaskDone"),
    "wrong owner": _set((*T0, "owner"), "queued"),
    "owner not a string": _set((*T0, "owner"), 3),
    "payload on an after timer": _set((*T0, "payload"), {"x": 1}),
    "wrong literal delay": _set((*T0, "delay_ms"), 29_000),
    "no delay on a literal timer": _set((*T0, "delay_ms"), None),
    "state not active": _set(("configuration",), ["queued"]),
    "armed twice": lambda d: {**d, "timers": d["timers"] * 2},
    "out of arming order": lambda d: {
        **d,
        "timer_generation": 3,
        "timers": [
            {**d["timers"][0], "generation": 3},
            {**d["timers"][0], "generation": 2},
        ],
    },
}


@pytest.mark.parametrize(
    ("which", "case"),
    [("send", c) for c in MALFORMED_SEND] + [("after", c) for c in MALFORMED_AFTER],
)
def test_from_json_rejects_each_malformed_timer_entry(which: str, case: str) -> None:
    sends, sent_data, lease, after_data = _states()
    chart, data, change = (
        (sends, sent_data, MALFORMED_SEND[case])
        if which == "send"
        else (lease, after_data, MALFORMED_AFTER[case])
    )
    assert statekit.State.from_json(chart, json.dumps(data)).timers  # the base case loads
    with pytest.raises(statekit.StateFormatError):
        statekit.State.from_json(chart, json.dumps(change(data)))


def test_from_json_rejects_an_at_timer_without_its_due_time() -> None:
    chart = machine(
        """
statechart: at
context: {until: {type: integer, default: 5}}
events: {Go: {}}
initial: idle
states:
  idle: {on: {Go: waiting}}
  waiting:
    after:
      - at: ctx.until
        to: idle
"""
    )
    data = chart.send(chart.start(), "Go").state.to_data()
    assert data["timers"][0]["due_ms"] == 5 and data["timers"][0]["delay_ms"] is None
    assert statekit.State.from_json(chart, data) == chart.send(chart.start(), "Go").state
    for change in (_set((*T0, "due_ms"), None), _set((*T0, "delay_ms"), 5)):
        with pytest.raises(statekit.StateFormatError):
            statekit.State.from_json(chart, change(data))

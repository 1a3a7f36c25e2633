"""Hostile delays and due times (`engine.timers.TIMER_MS_MIN`..`TIMER_MS_MAX`): a value
outside the range a stored timer may hold is refused when the timer is armed, as an
`EVALUATION_ERROR` with the state unchanged, through every way a timer is armed (an
`after` delay expression, a `send` delay, a `send` due time), in the engine and in the
runner on both stores; a value inside it is armed, stored and read back."""

from __future__ import annotations

from typing import Any

import pytest
from chart_helpers import compile_text, machine
from runner_charts import chart_from

import statekit
from statekit.engine.result import TOO_MANY_TIMERS, Status
from statekit.engine.timers import MAX_ARMED_TIMERS, TIMER_MS_MAX, TIMER_MS_MIN
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import Simulator

HOSTILE = """
statechart: hostile
context:
  d: {type: integer, default: 0}
events:
  After: {d: integer}
  Delay: {d: integer}
  At: {d: integer}
  Twice: {d: integer}
  Ping: {}
initial: idle
states:
  idle:
    on:
      After: {to: waiting, do: [{assign: {d: event.d}}]}
      Delay: {do: [{send: {event: Ping, delay: event.d, id: p}}]}
      At: {do: [{send: {event: Ping, at: event.d, id: p}}]}
      Twice: {do: [{send: {event: Ping, delay: event.d * 2, id: p}}]}
      Ping: {}
  waiting:
    after:
      - delay: ctx.d
        to: idle
"""

INT_MIN, INT_MAX = -(2**63), 2**63 - 1

# (event, value, refused?): each way of arming, each hostile values
CASES = [
    (event, value, value < TIMER_MS_MIN)
    for event in ("After", "Delay", "At")
    for value in (INT_MIN, INT_MIN + 1, -1, 0 if event == "At" else 1, INT_MAX)
] + [
    ("Twice", INT_MAX, True),  # beyond the 64-bit range
    ("Twice", INT_MIN // 2, True),  # exactly -2^63: beyond the timer range
    ("Twice", (INT_MIN + 2) // 2, False),  # -(2^63 - 2): inside it
]


@pytest.fixture(scope="module")
def hostile() -> statekit.Chart:
    return machine(HOSTILE)


def test_the_range_is_what_a_stored_timer_may_hold() -> None:
    assert (TIMER_MS_MIN, TIMER_MS_MAX) == (-(2**63 - 1), 2**63 - 1)


@pytest.mark.parametrize(("event", "value", "refused"), CASES)
def test_the_engine_refuses_what_it_could_not_store(
    hostile: statekit.Chart, event: str, value: int, refused: bool
) -> None:
    s0 = hostile.start()
    for now in (None, 0, 1_000, -1_000):  # twice each: the general and the compiled loop
        for _ in range(2):
            r = hostile.send(s0, event, {"d": value}, now_ms=now)
            if refused:
                assert (r.status, r.reason) == (Status.REJECTED, "EVALUATION_ERROR"), r
                assert r.state is s0 and r.timers_armed == ()
                continue
            assert r.applied, r.message
            (timer,) = r.state.timers
            for ms in (timer.delay_ms, timer.due_ms):
                assert ms is None or TIMER_MS_MIN <= ms <= TIMER_MS_MAX


def test_a_delay_that_is_not_an_integer_is_refused_when_compiled() -> None:
    result = compile_text(HOSTILE.replace("delay: event.d * 2", "delay: event.d / 2"))
    assert result.chart is None
    assert [d.message for d in result.diagnostics] == ["send 'delay': expected integer, got number"]


def test_the_simulator_refuses_it_the_same(hostile: statekit.Chart) -> None:
    sim = Simulator(hostile)
    r = sim.send("Delay", {"d": INT_MIN})
    assert (r.status, r.reason) == (Status.REJECTED, "EVALUATION_ERROR")
    assert sim.state.timers == ()


@pytest.mark.parametrize(("event", "value", "refused"), CASES)
def test_the_runner_never_stores_it(store_url: str, event: str, value: int, refused: bool) -> None:
    r = Runner(chart_from(HOSTILE), open_store(store_url))
    r.create("i")
    outcome: Any = r.apply("i", "e1", event, {"d": value})
    if refused:
        assert (outcome.status, outcome.reason) == (OutcomeStatus.REJECTED, "EVALUATION_ERROR")
        assert r.load("i").state.timers == ()
    else:
        assert outcome.status is OutcomeStatus.APPLIED
        assert len(r.load("i").state.timers) == 1  # stored and read back
    assert r.apply("i", "e2", "Ping", {}).status is not None  # the instance stays usable
    assert r.verify("i").ok


MANY = """
statechart: many
events:
  Add: {}
  Both: {}
  Ping: {}
initial: idle
states:
  idle:
    on:
      Add: {do: [{send: {event: Ping, delay: 1h}}]}
      Both: {do: [{send: {event: Ping, delay: 1h}}, {send: {event: Ping, delay: 2h}}]}
      Ping: {do: [{send: {event: Ping, delay: 1h}}, {send: {event: Ping, delay: 2h}}]}
"""


def test_armed_timers_are_bounded_per_instance() -> None:
    chart = machine(MANY)
    state = chart.start()
    for _ in range(MAX_ARMED_TIMERS - 1):
        state = chart.send(state, "Add", now_ms=0).state
    assert len(state.timers) == MAX_ARMED_TIMERS - 1
    over = chart.send(state, "Both", now_ms=0)  # two more: one over the bound
    assert (over.status, over.reason) == (Status.REJECTED, TOO_MANY_TIMERS)
    assert over.state is state and over.timers_armed == ()
    assert f"the bound is {MAX_ARMED_TIMERS}" in (over.message or "")
    full = chart.send(state, "Add", now_ms=0).state  # at the bound: accepted
    assert len(full.timers) == MAX_ARMED_TIMERS
    assert chart.send(full, "Add", now_ms=0).reason == TOO_MANY_TIMERS
    # a delivery that arms one more than it consumes is refused the same, and consumes
    # nothing (the runner records the rejected delivery, which consumes the timer)
    fired = chart.fire(full, full.timers[0].id, now_ms=0)
    assert fired.reason == TOO_MANY_TIMERS
    assert len(fired.state.timers) == MAX_ARMED_TIMERS - 1

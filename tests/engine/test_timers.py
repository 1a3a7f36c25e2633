"""`after` timers in the pure engine: armed on entry, cancelled on exit, delivered by `fire`."""

from __future__ import annotations

import pytest
from timer_ir import with_after_timers

import statekit
from statekit.engine.result import ENGINE_REASONS, STALE_TIMER, Status

LEASE = """
statechart: lease
version: 1
context:
  attempts: {type: integer, default: 0}
events:
  TaskStarted: {}
  TaskDone: {}
  Restart: {}
  LEASE: {}
initial: queued
states:
  queued:
    on: {TaskStarted: running}
  running:
    entry: [{assign: {attempts: ctx.attempts + 1}}]
    on:
      TaskDone: done
      Restart: running
      LEASE: recovering
  recovering:
    on: {TaskStarted: running}
  done: {final: true}
"""
TIMER = "after(30s)@running"


@pytest.fixture(scope="module")
def lease() -> statekit.Chart:
    return with_after_timers(LEASE, {"LEASE": ("running", "30s", 30_000)})


def test_entering_a_state_arms_its_timer_and_fire_delivers_it(lease: statekit.Chart) -> None:
    s0 = lease.start()
    assert s0.timers == () and s0.timer_generation == 0
    r = lease.send(s0, "TaskStarted", now_ms=1_000)
    assert r.status is Status.APPLIED
    (armed,) = r.timers_armed
    assert armed == statekit.ArmedTimer(
        id=TIMER,
        event=TIMER,
        payload={},
        delay_ms=30_000,
        due_ms=31_000,
        generation=1,
        owner="running",
    )
    assert r.state.timers == (armed,) and r.state.timer(TIMER) == armed
    assert r.state.timer_generation == 1
    fired = lease.fire(r.state, TIMER, generation=1)
    assert fired.status is Status.APPLIED and fired.timer == armed
    assert fired.state.configuration == {"recovering"}
    assert fired.state.timers == () and fired.timers_cancelled == ()
    assert fired.evidence[0].event == TIMER


def test_without_a_clock_a_relative_timer_has_no_due_time(lease: statekit.Chart) -> None:
    r = lease.send(lease.start(), "TaskStarted")
    assert r.timers_armed[0].due_ms is None and r.timers_armed[0].delay_ms == 30_000


def test_exit_cancels_and_the_old_timer_is_stale(lease: statekit.Chart) -> None:
    running = lease.send(lease.start(), "TaskStarted").state
    done = lease.send(running, "TaskDone")
    assert done.timers_cancelled == running.timers and done.state.timers == ()
    stale = lease.fire(done.state, TIMER)
    assert (stale.status, stale.reason) == (Status.REJECTED, STALE_TIMER)
    assert stale.state is done.state and STALE_TIMER in ENGINE_REASONS


def test_reentry_arms_a_fresh_timer_and_the_old_generation_is_stale(
    lease: statekit.Chart,
) -> None:
    running = lease.send(lease.start(), "TaskStarted").state
    again = lease.send(running, "Restart")
    assert [t.generation for t in again.timers_cancelled] == [1]
    assert [t.generation for t in again.timers_armed] == [2]
    stale = lease.fire(again.state, TIMER, generation=1)
    assert stale.reason == STALE_TIMER and stale.state is again.state
    assert lease.fire(again.state, TIMER, generation=2).applied


def test_sending_the_timer_event_name_is_fire(lease: statekit.Chart) -> None:
    running = lease.send(lease.start(), "TaskStarted").state
    assert lease.send(running, TIMER) == lease.fire(running, TIMER)
    assert lease.send(running, TIMER).timer == running.timers[0]
    done = lease.send(running, "TaskDone").state
    assert lease.send(done, TIMER).reason == STALE_TIMER
    assert lease.send(running, TIMER, {"x": 1}).reason == "INVALID_PAYLOAD"


def test_a_delivery_that_selects_nothing_consumes_the_timer() -> None:
    chart = with_after_timers(
        LEASE.replace("LEASE: recovering", "LEASE: {to: recovering, if: ctx.attempts > 1}"),
        {"LEASE": ("running", "30s", 30_000)},
    )
    running = chart.send(chart.start(), "TaskStarted").state
    r = chart.fire(running, TIMER)
    assert (r.status, r.reason) == (Status.REJECTED, "GUARD_FAILED")
    assert r.timer == running.timers[0]
    assert r.state.configuration == running.configuration and r.state.context == running.context
    assert r.state.timers == () and r.emitted == ()
    assert chart.fire(r.state, TIMER).reason == STALE_TIMER


def test_state_json_round_trip_with_timers(lease: statekit.Chart) -> None:
    s0 = lease.start()
    assert "timers" not in s0.to_json()
    running = lease.send(s0, "TaskStarted", now_ms=5).state
    again = statekit.State.from_json(lease, running.to_json())
    assert again == running and again.timers == running.timers
    done = lease.send(running, "TaskDone").state
    data = done.to_data()
    assert data["timers"] == [] and data["timer_generation"] == 1
    assert statekit.State.from_json(lease, done.to_json()) == done

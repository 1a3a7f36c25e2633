"""Time in the pure engine: `after` timers armed on entry and cancelled on exit, delayed and
undelayed `send`, `cancel`, delivery by `fire` (consumed, or `STALE_TIMER`), `now_ms`."""

from __future__ import annotations

from pathlib import Path

import pytest
from chart_helpers import machine

import statekit
from statekit.engine.result import ENGINE_REASONS, STALE_TIMER, Status
from statekit.engine.step import step
from statekit.testing import Simulator

LEASE = """
statechart: lease
context:
  attempts: {type: integer, default: 0}
  budget: {type: integer, default: 2}
events:
  TaskStarted: {}
  TaskDone: {}
  Restart: {}
initial: queued
states:
  queued:
    on: {TaskStarted: running}
  running:
    entry: [{assign: {attempts: ctx.attempts + 1}}]
    after:
      30s:
        to: recovering
        if: ctx.attempts <= ctx.budget
        else: BUDGET_EXHAUSTED
    on:
      TaskDone: done
      Restart: running
  recovering:
    on: {TaskStarted: running}
  done: {final: true}
"""
TIMER = "after(30s)@running"


@pytest.fixture(scope="module")
def lease() -> statekit.Chart:
    return machine(LEASE)


def test_entering_a_state_arms_its_timer_after_entry_and_fire_delivers_it(
    lease: statekit.Chart,
) -> None:
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
    assert r.state.timer_generation == 1 and r.timers_cancelled == () and r.sent == ()
    assert r.evidence[0].armed == (TIMER,)
    fired = lease.fire(r.state, TIMER, generation=1, now_ms=31_000)
    assert fired.status is Status.APPLIED and fired.timer == armed
    assert fired.state.configuration == {"recovering"}
    assert fired.state.timers == () and fired.timers_cancelled == ()
    assert fired.evidence[0].event == TIMER


def test_without_a_clock_a_relative_timer_has_no_due_time(lease: statekit.Chart) -> None:
    r = lease.send(lease.start(), "TaskStarted")
    assert (r.timers_armed[0].delay_ms, r.timers_armed[0].due_ms) == (30_000, None)


def test_exit_cancels_the_timer_and_a_later_delivery_is_stale(lease: statekit.Chart) -> None:
    running = lease.send(lease.start(), "TaskStarted").state
    done = lease.send(running, "TaskDone")
    assert done.timers_cancelled == running.timers and done.state.timers == ()
    assert done.evidence[0].cancelled == (TIMER,)
    stale = lease.fire(done.state, TIMER)
    assert (stale.status, stale.reason) == (Status.REJECTED, STALE_TIMER)
    assert stale.state is done.state and stale.timer is None and STALE_TIMER in ENGINE_REASONS
    assert lease.fire(done.state, "no such timer").reason == STALE_TIMER


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


def test_a_failing_guard_on_a_timer_is_a_classified_rejection_that_consumes_it(
    lease: statekit.Chart,
) -> None:
    state = lease.start()
    for _ in range(3):  # the third attempt is over the budget
        state = lease.send(state, "TaskStarted").state
        if _ < 2:
            state = lease.fire(state, TIMER).state
    r = lease.fire(state, TIMER)
    assert (r.status, r.reason) == (Status.REJECTED, "BUDGET_EXHAUSTED")
    assert r.timer == state.timers[0] and r.emitted == () and r.evidence == ()
    assert r.state.configuration == state.configuration and r.state.context == state.context
    assert r.state.history == state.history
    assert r.state.timers == () and r.state.timer_generation == state.timer_generation
    assert lease.fire(r.state, TIMER).reason == STALE_TIMER


def test_consume_removes_an_armed_timer_with_the_callers_reason_and_nothing_else(
    lease: statekit.Chart,
) -> None:
    running = lease.send(lease.start(), "TaskStarted", now_ms=1_000).state
    (armed,) = running.timers
    r = lease.consume(
        running, TIMER, generation=1, reason="DUPLICATE_FACT", message="said", event_id="x"
    )
    assert (r.status, r.reason, r.message, r.event, r.event_id) == (
        Status.REJECTED, "DUPLICATE_FACT", "said", TIMER, "x",
    )  # fmt: skip
    assert r.timer == armed and r.emitted == () and r.evidence == () and r.sent == ()
    assert r.state.configuration == running.configuration and r.state.context == running.context
    assert r.state.timers == () and r.state.timer_generation == running.timer_generation
    for generation, state in ((2, running), (1, r.state)):  # not armed with that generation
        stale = lease.consume(state, TIMER, generation=generation, reason="R", message="m")
        assert stale == lease.fire(state, TIMER, generation=generation)
        assert stale.reason == STALE_TIMER and stale.state is state


TRANSIENT = """
statechart: transient
context:
  skip: {type: boolean, default: true}
events: {Go: {}, Ping: {}}
initial: idle
states:
  idle:
    on: {Go: passing}
  passing:
    after: {1s: idle}
    entry: [{send: {event: Ping, delay: 5s, id: ping}}]
    always: {to: settled, if: ctx.skip, do: [{cancel: ping}]}
  settled:
    on: {Ping: idle}
"""


def test_a_timer_armed_and_cancelled_in_the_same_macrostep_never_fires() -> None:
    chart = machine(TRANSIENT)
    r = chart.send(chart.start(), "Go", now_ms=0)
    assert r.state.configuration == {"settled"}
    assert r.timers_armed == () and r.timers_cancelled == () and r.state.timers == ()
    assert r.state.timer_generation == 2  # both were armed, then cancelled
    assert [m.armed for m in r.evidence] == [("ping", "after(1s)@passing"), ()]
    assert [m.cancelled for m in r.evidence] == [(), ("after(1s)@passing", "ping")]
    sim = Simulator(chart)
    sim.send("Go")
    assert sim.next_due_ms is None and sim.advance(60_000) == []


SENDS = """
statechart: sends
context:
  delay: {type: integer, default: 2000}
  when: {type: integer, default: 100}
events:
  Arm: {}
  ArmAgain: {}
  Cancel: {}
  CancelOther: {}
  Leave: {}
  Reminder: {n: {type: integer, default: 7}, who: {type: string}}
  Now: {}
  Zero: {}
initial: a
states:
  a:
    on:
      Arm: {to: b, do: [{send: {event: Reminder, payload: {who: "'ann'"}, delay: 10s, id: r}}]}
      ArmAgain:
        do: [{send: {event: Reminder, payload: {who: "'bob'", n: 1}, delay: ctx.delay, id: r}}]
      Cancel: {do: [{cancel: r}]}
      Now: {do: [{send: {event: Reminder, payload: {who: "'now'"}}}]}
      Zero: {do: [{send: {event: Reminder, payload: {who: "'now'"}, delay: 0ms}}]}
      Reminder: {do: [{emit: {type: Reminded, payload: {who: event.who}}}]}
  b:
    on:
      Leave: c
      ArmAgain:
        do: [{send: {event: Reminder, payload: {who: "'at'"}, at: ctx.when, id: r}}]
      Cancel: {do: [{cancel: r}]}
      Reminder: {to: a, do: [{emit: {type: Reminded, payload: {who: event.who}}}]}
  c:
    on:
      Leave: a
      Reminder: {to: a, do: [{emit: {type: Reminded, payload: {who: event.who}}}]}
"""


@pytest.fixture(scope="module")
def sends() -> statekit.Chart:
    return machine(SENDS)


def test_a_delayed_send_arms_a_timer_with_its_checked_payload(sends: statekit.Chart) -> None:
    r = sends.send(sends.start(), "Arm", now_ms=500)
    (timer,) = r.timers_armed
    assert (timer.id, timer.event, timer.owner, timer.generation) == ("r", "Reminder", None, 1)
    assert dict(timer.payload) == {"n": 7, "who": "ann"}  # the declared default filled in
    assert (timer.delay_ms, timer.due_ms) == (10_000, 10_500)
    fired = sends.fire(r.state, "r")
    assert fired.applied and fired.state.configuration == {"a"}
    assert [dict(m.payload) for m in fired.emitted] == [{"who": "ann"}]


def test_a_send_with_an_armed_id_replaces_it(sends: statekit.Chart) -> None:
    b = sends.send(sends.start(), "Arm", now_ms=0).state
    r = sends.send(b, "ArmAgain", now_ms=50)
    (old,) = r.timers_cancelled
    (new,) = r.timers_armed
    assert (old.generation, new.generation) == (1, 2) and new.id == old.id == "r"
    assert (new.delay_ms, new.due_ms, new.payload["who"]) == (None, 100, "at")
    assert r.state.timers == (new,)
    assert sends.fire(r.state, "r", generation=1).reason == STALE_TIMER


def test_cancel_by_id_armed_and_not_armed(sends: statekit.Chart) -> None:
    b = sends.send(sends.start(), "Arm").state
    r = sends.send(b, "Cancel")
    assert r.applied and r.timers_cancelled == b.timers and r.state.timers == ()
    again = sends.send(r.state, "Cancel")  # nothing armed: nothing happens
    assert again.applied and again.timers_cancelled == () and again.state.timers == ()
    assert again.state == r.state


def test_a_delayed_send_outlives_the_states_it_was_sent_from(sends: statekit.Chart) -> None:
    b = sends.send(sends.start(), "Arm").state
    c = sends.send(b, "Leave")
    assert c.timers_cancelled == () and c.state.timers == b.timers
    a = sends.send(c.state, "Leave")
    assert a.state.configuration == {"a"} and a.state.timers == b.timers
    fired = sends.fire(a.state, "r")
    assert fired.applied and [m.type for m in fired.emitted] == ["Reminded"]


def test_a_zero_delay_is_the_same_as_no_delay(sends: statekit.Chart) -> None:
    s0 = sends.start()
    now, zero = sends.send(s0, "Now"), sends.send(s0, "Zero")
    assert now.sent == zero.sent == (statekit.SentEvent("Reminder", {"n": 7, "who": "now"}),)
    assert now.timers_armed == zero.timers_armed == () and zero.state.timers == ()
    assert zero.evidence[0].sent == ("Reminder",) and zero.state.timer_generation == 0
    assert zero.emitted == ()  # the sent event is not processed inside the macrostep


def test_a_timer_expression_that_fails_rejects_the_step_and_arms_nothing() -> None:
    chart = machine(
        """
statechart: bad_delay
context:
  zero: {type: integer, default: 0}
events: {Go: {}}
initial: idle
states:
  idle: {on: {Go: waiting}}
  waiting:
    after:
      - delay: 1000 // ctx.zero
        to: idle
"""
    )
    s0 = chart.start()
    r = chart.send(s0, "Go")
    assert (r.status, r.reason) == (Status.REJECTED, "EVALUATION_ERROR")
    assert r.state is s0 and r.timers_armed == ()


def test_the_initial_macrostep_arms_timers_and_start_caches_only_without_a_clock() -> None:
    chart = machine(
        """
statechart: starts
events: {Ping: {}}
initial: waiting
states:
  waiting:
    entry: [{send: {event: Ping}}]
    after: {15m: closed}
    on: {Ping: {do: []}}
  closed: {}
"""
    )
    first = chart.initialize(now_ms=1)
    assert [t.due_ms for t in first.timers_armed] == [900_001]
    assert first.sent == (statekit.SentEvent("Ping", {}),)
    assert chart.start(now_ms=1) == first.state and chart.start().timers[0].due_ms is None
    assert chart.start() is chart.start()


def test_results_of_charts_without_time_carry_no_time(lease: statekit.Chart) -> None:
    # the payment chart as it was before its 15-minute timeout (machines/payment.yaml has one)
    payment = statekit.load(Path(__file__).parents[1] / "charts" / "payment_v1.yaml")
    assert payment.ir.timers == ()
    r = payment.send(payment.start(), "START_PAY", {"amount": 100})
    assert (r.timers_armed, r.timers_cancelled, r.sent, r.timer) == ((), (), (), None)
    assert all((m.armed, m.cancelled, m.sent) == ((), (), ()) for m in r.evidence)
    assert "timer" not in r.state.to_json() and r.state.timer_generation == 0


def test_fire_refuses_what_is_not_a_state_and_any_id_that_is_not_armed(
    lease: statekit.Chart,
) -> None:
    running = lease.send(lease.start(), "TaskStarted").state
    with pytest.raises(TypeError):
        lease.fire("not a state", TIMER)  # type: ignore[arg-type]
    for bad in (123, None, "", "after(30s)@queued", "send(TaskDone)#1", ("x",)):
        r = lease.fire(running, bad)  # type: ignore[arg-type]
        assert (r.status, r.reason, r.state) == (Status.REJECTED, STALE_TIMER, running)
    assert lease.fire(running, TIMER, generation=0).reason == STALE_TIMER


BARE = """
statechart: bare
events: {Go: {}, Back: {}}
initial: x
states:
  x: {on: {Go: y}}
  y: {after: {1s: x}, on: {Back: x, Go: y}}
"""


@pytest.mark.parametrize("text", [BARE, LEASE, TRANSIENT, SENDS])
def test_the_memo_of_data_free_macrosteps_never_skips_a_timer(text: str) -> None:
    chart = machine(text)
    events = sorted(chart.ir.events)
    state = chart.start(now_ms=0)
    for round_ in range(3):
        for event in events:
            payload = {"who": "x"} if event == "Reminder" else None
            fast = step(chart.tables, state, event, payload, now_ms=round_)
            slow = step(chart.tables, state, event, payload, now_ms=round_, memoised=False)
            assert fast == slow and fast.state.timers == slow.state.timers
            state = fast.state
    if text is BARE:  # guard-free and effect-free transitions still arm and cancel
        r = step(chart.tables, chart.start(), "Go")
        assert [t.id for t in r.timers_armed] == ["after(1s)@y"]
        assert [t.id for t in step(chart.tables, r.state, "Back").timers_cancelled] == [
            "after(1s)@y"
        ]

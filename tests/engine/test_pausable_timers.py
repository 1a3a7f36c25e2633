"""Pausable timers in the pure engine: `pause: NAME` keeps a timer's remaining time and
takes its due time away, `resume: NAME` arms it again due after that time; the effects
are no-ops on a timer not armed or already in that state; leaving the owner cancels a
paused `after` timer; a delivery of a paused timer is `PAUSED_TIMER`; the state's JSON
keeps the pause (and reads a timer written without one as running); replay reproduces
it; an unknown name is a positioned `unknown-timer-id` error with a hint."""

from __future__ import annotations

import json

import pytest
from chart_helpers import compile_text, machine, only

import statekit
from statekit.engine.result import ENGINE_REASONS, PAUSED_TIMER, STALE_TIMER, Status
from statekit.engine.timers import TIMER_MS_MAX
from statekit.testing import Simulator

PAUSABLE = """
statechart: pausable
events: {HOLD: {}, GO: {}, ARM: {}, LEAVE: {}, BACK: {}, PING: {}}
initial: work
states:
  work:
    after: [{id: sla, delay: 10s, to: late}]
    on:
      HOLD: {do: [{pause: sla}, {pause: ping}]}
      GO: {do: [{resume: sla}, {resume: ping}]}
      ARM: {do: [{send: {event: PING, delay: 5s, id: ping}}]}
      LEAVE: elsewhere
      PING: {}
  elsewhere:
    on:
      HOLD: {do: [{pause: sla}, {pause: ping}]}
      GO: {do: [{resume: sla}, {resume: ping}]}
      BACK: work
      PING: {}
  late: {final: true}
"""
SLA = "after(sla)@work"


@pytest.fixture(scope="module")
def chart() -> statekit.Chart:
    return machine(PAUSABLE)


def test_a_pause_keeps_the_time_left_and_a_resume_arms_it_that_much_later(
    chart: statekit.Chart,
) -> None:
    s0 = chart.start(now_ms=1_000)
    (armed,) = s0.timers
    assert (armed.due_ms, armed.generation, armed.paused_ms) == (11_000, 1, None)

    held = chart.send(s0, "HOLD", now_ms=4_000)
    (paused,) = held.state.timers
    assert (paused.due_ms, paused.paused_ms, paused.delay_ms) == (None, 7_000, 10_000)
    assert paused.generation == 2  # armed again under the next generation
    assert held.timers_cancelled == (armed,) and held.timers_armed == (paused,)
    (micro,) = held.evidence
    assert (micro.cancelled, micro.armed) == ((SLA,), (SLA,))

    going = chart.send(held.state, "GO", now_ms=60_000)
    (running,) = going.state.timers
    assert (running.due_ms, running.paused_ms, running.generation) == (67_000, None, 3)
    late = chart.fire(going.state, SLA, generation=3, now_ms=67_000)
    assert late.status is Status.APPLIED and late.state.configuration == {"late"}


def test_a_paused_timer_is_not_delivered_and_its_old_generation_is_stale(
    chart: statekit.Chart,
) -> None:
    held = chart.send(chart.start(now_ms=0), "HOLD", now_ms=1_000).state
    refused = chart.fire(held, SLA, now_ms=50_000)
    assert (refused.status, refused.reason) == (Status.REJECTED, PAUSED_TIMER)
    assert refused.state is held and PAUSED_TIMER in ENGINE_REASONS
    assert "paused (9000 ms left)" in (refused.message or "")
    sent = chart.send(held, SLA, now_ms=50_000)  # sending the timer's event is `fire`
    assert sent.reason == PAUSED_TIMER
    consumed = chart.consume(held, SLA, generation=2, reason="X", message="x")
    assert consumed.reason == PAUSED_TIMER and consumed.state is held
    stale = chart.fire(held, SLA, generation=1, now_ms=50_000)
    assert stale.reason == STALE_TIMER


@pytest.mark.parametrize(
    ("events", "why"),
    [
        (["HOLD", "HOLD"], "pausing a paused timer"),
        (["GO"], "resuming a running timer"),
        (["LEAVE", "GO"], "resuming a timer that is not armed"),
        (["LEAVE", "HOLD"], "pausing a timer that is not armed"),
    ],
)
def test_pause_and_resume_do_nothing_to_a_timer_not_in_the_other_state(
    chart: statekit.Chart, events: list[str], why: str
) -> None:
    state = chart.start(now_ms=0)
    for event in events[:-1]:
        state = chart.send(state, event, now_ms=1_000).state
    last = chart.send(state, events[-1], now_ms=2_000)
    assert last.status is Status.APPLIED, why
    assert last.state.timers == state.timers, why
    assert last.state.timer_generation == state.timer_generation, why
    assert (last.timers_armed, last.timers_cancelled) == ((), ()), why


def test_leaving_its_state_cancels_a_paused_after_timer(chart: statekit.Chart) -> None:
    held = chart.send(chart.start(now_ms=0), "HOLD", now_ms=1_000).state
    left = chart.send(held, "LEAVE", now_ms=2_000)
    assert left.state.timers == ()
    (cancelled,) = left.timers_cancelled
    assert (cancelled.id, cancelled.paused_ms) == (SLA, 9_000)
    back = chart.send(left.state, "BACK", now_ms=3_000)
    (fresh,) = back.state.timers  # entering again arms a fresh, running one
    assert (fresh.due_ms, fresh.paused_ms) == (13_000, None)


def test_a_delayed_send_pauses_and_resumes_by_its_id_whatever_the_state(
    chart: statekit.Chart,
) -> None:
    state = chart.send(chart.start(now_ms=0), "ARM", now_ms=1_000).state
    state = chart.send(state, "LEAVE", now_ms=2_000).state  # the sla goes, the ping stays
    held = chart.send(state, "HOLD", now_ms=3_000).state
    (ping,) = held.timers
    assert (ping.id, ping.paused_ms, ping.due_ms) == ("ping", 3_000, None)
    resumed = chart.send(held, "GO", now_ms=100_000).state
    (ping,) = resumed.timers
    assert (ping.due_ms, ping.paused_ms, dict(ping.payload)) == (103_000, None, {})


def test_without_a_clock_reading_a_pause_keeps_the_delay_and_a_resume_has_no_due_time(
    chart: statekit.Chart,
) -> None:
    held = chart.send(chart.start(), "HOLD").state
    (paused,) = held.timers
    assert (paused.paused_ms, paused.due_ms) == (10_000, None)
    (running,) = chart.send(held, "GO").state.timers
    assert (running.paused_ms, running.due_ms) == (None, None)


def test_a_timer_paused_when_overdue_is_due_at_once_when_resumed(chart: statekit.Chart) -> None:
    sim = Simulator(chart, now_ms=0)
    # the timer is due at 10 s; HOLD at 12 s before anything delivered it
    held = chart.send(sim.state, "HOLD", now_ms=12_000).state
    (paused,) = held.timers
    assert paused.paused_ms == -2_000
    (running,) = chart.send(held, "GO", now_ms=20_000).state.timers
    assert running.due_ms == 18_000


def test_the_simulator_never_delivers_a_paused_timer_and_replay_reproduces_pauses(
    chart: statekit.Chart,
) -> None:
    sim = Simulator(chart, now_ms=0)
    sim.advance(4_000)
    sim.send("HOLD")
    assert sim.next_due_ms is None
    assert sim.advance(1_000_000) == []
    sim.send("GO")
    assert sim.next_due_ms == 1_004_000 + 6_000
    (late,) = sim.advance(6_000)
    assert late.status is Status.APPLIED and sim.state.configuration == {"late"}
    replayed = chart.replay(sim.history, state=sim.start_state)
    assert replayed.state == sim.state


def test_the_state_json_keeps_a_pause_and_reads_a_timer_without_one_as_running(
    chart: statekit.Chart,
) -> None:
    held = chart.send(chart.start(now_ms=0), "HOLD", now_ms=1_000).state
    data = json.loads(held.to_json())
    (entry,) = data["timers"]
    assert (entry["paused_ms"], entry["due_ms"]) == (9_000, None)
    assert chart.state_from_json(data) == held
    running = json.loads(chart.start(now_ms=0).to_json())
    (entry,) = running["timers"]
    assert "paused_ms" not in entry  # the form written before timers could pause
    (timer,) = chart.state_from_json(running).timers
    assert timer.paused_ms is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"paused_ms": "9s"}, "paused_ms must be an integer"),
        ({"paused_ms": None}, "paused_ms must be an integer"),
        ({"paused_ms": 9_000, "due_ms": 10_000}, "a paused timer has no due time"),
        ({"paused": 9_000}, "expected an object with keys"),
    ],
)
def test_a_stored_pause_that_does_not_fit_is_a_state_format_error(
    chart: statekit.Chart, change: dict[str, object], message: str
) -> None:
    data = json.loads(chart.start(now_ms=0).to_json())
    data["timers"][0].update(change)
    with pytest.raises(statekit.StateFormatError, match=message):
        chart.state_from_json(data)


def test_an_unknown_timer_name_is_a_positioned_error_with_a_hint() -> None:
    text = PAUSABLE.replace("{pause: ping}]}", "{pause: pnig}]}", 1)
    problem = only(compile_text(text), "unknown-timer-id")
    assert problem.message == "pause of 'pnig': no named timer or send in the chart has this id"
    assert problem.notes[0] == "did you mean 'ping'?"
    line = next(n for n, row in enumerate(text.lstrip("\n").splitlines(), 1) if "pnig" in row)
    column = text.lstrip("\n").splitlines()[line - 1].index("pnig") + 1
    assert (problem.span.line, problem.span.column) == (line, column)
    resumed = only(
        compile_text(PAUSABLE.replace("{resume: sla}", "{resume: SLA}", 1)), "unknown-timer-id"
    )
    assert resumed.message.startswith("resume of 'SLA'")
    assert resumed.notes[0] == "did you mean 'sla'?"


def test_the_time_left_stays_within_the_range_a_state_holds(chart: statekit.Chart) -> None:
    far = TIMER_MS_MAX
    started = chart.start(now_ms=far - 5_000)  # due at the largest time a state holds
    held = chart.send(started, "HOLD", now_ms=-far).state  # a clock far behind it
    (paused,) = held.timers
    assert paused.paused_ms == far
    assert chart.state_from_json(held.to_json()) == held

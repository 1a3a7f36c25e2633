"""`now` in a running chart: the step's `now_ms` in guards, assigns, emits, raises and
timers; a step that reads `now` without a clock reading is refused (CLOCK_REQUIRED),
one that does not read it, and any step of a chart that never does, needs none."""

from __future__ import annotations

import pytest
from chart_helpers import machine

import statekit
from statekit.engine.chart import StartError
from statekit.engine.result import CLOCK_REQUIRED, ENGINE_REASONS, EVALUATION_ERROR, Status

T0 = 1_700_000_000_000

SLA = """
statechart: sla
context:
  opened_at: {type: integer, default: 0}
  deadline: {type: integer, default: 0}
  key: {type: string, default: ""}
  late: {type: boolean, default: false}
events:
  OPEN: {n: integer}
  REPLY: {}
  NOTED: {at: integer}
initial: new
states:
  new:
    on:
      OPEN:
        to: open
        do:
          - assign:
              opened_at: now
              deadline: now + 4h
              key: "format('t-{}-{}', event.n, now)"
          - emit: {type: Opened, payload: {at: now, due: ctx.deadline}}
          - raise: {event: NOTED, payload: {at: now - ctx.opened_at}}
  open:
    on:
      NOTED: {}
      REPLY:
        - {to: answered, if: now <= ctx.deadline}
        - {to: answered, do: [{assign: {late: true}}]}
    after:
      - at: ctx.deadline + 1h
        to: breached
        do: [{emit: {type: Breached, payload: {late_ms: now - ctx.deadline}}}]
  answered: {final: true}
  breached: {final: true}
"""

PLAIN = """
statechart: plain
events: {GO: {}}
initial: a
states:
  a: {on: {GO: b}}
  b: {}
"""


@pytest.fixture(scope="module")
def sla() -> statekit.Chart:
    return machine(SLA)


def test_now_is_the_steps_clock_reading_everywhere(sla: statekit.Chart) -> None:
    r = sla.send(sla.start(), "OPEN", {"n": 7}, now_ms=T0)
    assert r.status is Status.APPLIED
    ctx = r.state.context
    assert (ctx["opened_at"], ctx["deadline"], ctx["key"]) == (T0, T0 + 4 * 3_600_000, f"t-7-{T0}")
    (message,) = r.emitted
    assert dict(message.payload) == {"at": T0, "due": T0 + 4 * 3_600_000}
    (timer,) = r.state.timers
    assert timer.due_ms == T0 + 5 * 3_600_000


@pytest.mark.parametrize(("later", "late"), [(4 * 3_600_000, False), (4 * 3_600_000 + 1, True)])
def test_guards_over_now_decide_by_the_clock(sla: statekit.Chart, later: int, late: bool) -> None:
    opened = sla.send(sla.start(), "OPEN", {"n": 1}, now_ms=T0).state
    r = sla.send(opened, "REPLY", now_ms=T0 + later)
    assert r.status is Status.APPLIED and r.state.context["late"] is late


def test_a_step_without_a_clock_reading_is_refused_and_changes_nothing(
    sla: statekit.Chart,
) -> None:
    s0 = sla.start()
    r = sla.send(s0, "OPEN", {"n": 1})
    assert (r.status, r.reason) == (Status.REJECTED, CLOCK_REQUIRED)
    assert r.state is s0 and r.emitted == ()
    assert "reads `now`" in (r.message or "") and "now_ms" in (r.message or "")
    assert CLOCK_REQUIRED in ENGINE_REASONS
    opened = sla.send(s0, "OPEN", {"n": 1}, now_ms=T0).state
    (timer,) = opened.timers
    refused = sla.fire(opened, timer.id)
    assert (refused.status, refused.reason) == (Status.REJECTED, CLOCK_REQUIRED)
    assert refused.state.timers == opened.timers  # the timer stays armed
    # a step of the chart that reads no `now` needs no clock
    stray = sla.send(opened, "OPEN", {"n": 1})
    assert (stray.status, stray.reason) == (Status.REJECTED, "UNDEFINED_TRANSITION")
    fired = sla.fire(opened, timer.id, now_ms=timer.due_ms)
    assert fired.status is Status.APPLIED and fired.state.is_active("breached")
    assert [dict(m.payload) for m in fired.emitted] == [{"late_ms": 3_600_000}]


def test_an_initial_macrostep_that_reads_now_needs_the_clock() -> None:
    chart = machine(
        """
statechart: stamped
context: {created: {type: integer, default: 0}}
initial: a
states:
  a: {entry: [{assign: {created: now - 1d}}]}
"""
    )
    assert chart.start(now_ms=T0).context["created"] == T0 - 86_400_000
    with pytest.raises(StartError, match=r"reads `now`: give the clock's reading \(now_ms\)"):
        chart.start()


def test_a_chart_that_never_reads_now_needs_no_clock() -> None:
    chart = machine(PLAIN)
    assert chart.send(chart.start(), "GO").status is Status.APPLIED


def test_now_arithmetic_past_64_bits_is_an_evaluation_error() -> None:
    chart = machine(
        """
statechart: square
context: {x: {type: integer, default: 0}}
events: {GO: {}}
initial: a
states:
  a: {on: {GO: {to: b, do: [{assign: {x: now * now}}]}}}
  b: {}
"""
    )
    r = chart.send(chart.start(), "GO", now_ms=T0)
    assert (r.status, r.reason) == (Status.REJECTED, EVALUATION_ERROR)
    assert "64-bit" in (r.message or "")
    assert chart.send(chart.start(), "GO", now_ms=3).state.context["x"] == 9


def test_replay_reuses_each_events_clock(sla: statekit.Chart) -> None:
    events = [
        statekit.Event("OPEN", {"n": 2}, id="e1", now_ms=T0),
        statekit.Event("REPLY", {}, id="e2", now_ms=T0 + 5 * 3_600_000),
    ]
    replayed = sla.replay(events).unwrap()
    assert replayed.context["late"] is True and replayed.context["opened_at"] == T0

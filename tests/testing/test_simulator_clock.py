"""`RunnerSimulator(chart, clock=...)`: every step gets the clock's reading as the runner's
steps do (what `now` reads, and the due times of relative delays); without a clock a step
that reads `now` is rejected CLOCK_REQUIRED, as `Chart.send` rejects it."""

from __future__ import annotations

from chart_helpers import machine

from statekit import OutcomeStatus
from statekit.testing import RunnerSimulator

T0 = 1_767_225_600_000
STAMPED = """
statechart: stamped
context:
  created_at: {type: integer, default: 0}
  seen_after: {type: integer, default: -1}
events:
  SEEN: {}
initial: fresh
states:
  fresh:
    entry: [{assign: {created_at: now}}]
    on:
      SEEN: {to: seen, do: [{assign: {seen_after: now - ctx.created_at}}]}
  seen:
    after:
      - {delay: 1h, to: fresh}
"""


def test_a_simulator_with_a_clock_gives_every_step_its_reading() -> None:
    clock = [T0]
    sim = RunnerSimulator(machine(STAMPED), clock=lambda: clock[0])
    sim.create("s-1")
    clock[0] = T0 + 5_000
    outcome = sim.apply("s-1", "e1", "SEEN")
    assert outcome.status is OutcomeStatus.APPLIED
    state = sim.load("s-1").state
    assert (state.context["created_at"], state.context["seen_after"]) == (T0, 5_000)
    (timer,) = state.timers
    assert timer.due_ms == T0 + 5_000 + 3_600_000


def test_without_a_clock_a_step_that_reads_now_is_rejected() -> None:
    chart = machine(STAMPED.replace("entry: [{assign: {created_at: now}}]", "entry: []"))
    sim = RunnerSimulator(chart)
    sim.create("s-1")
    outcome = sim.apply("s-1", "e1", "SEEN")
    assert (outcome.status, outcome.reason) == (OutcomeStatus.REJECTED, "CLOCK_REQUIRED")
    assert sim.load("s-1").version == 0

"""`now` in the durable runner, on each store: every step reads the runner's clock, the
event rows record it, and after a restart (a new runner, its clock elsewhere) the replay,
`verify`, `rebuild` and timer deliveries give the values the live steps computed. A
rejection decided by `now` (its row keeps no clock reading) is not a difference."""

from __future__ import annotations

from runner_charts import chart_from

from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

T0 = 1_767_225_600_000
HOUR = 3_600_000

SLA = """
statechart: sla
context:
  opened_at: {type: integer, default: 0}
  answered_in: {type: integer, default: -1}
  key: {type: string, default: ""}
events:
  OPEN: {n: integer}
  REPLY: {}
  NOTE: {}
initial: new
states:
  new:
    on:
      OPEN:
        to: open
        do: [{assign: {opened_at: now, key: "format('t-{}-{}', event.n, now)"}}]
  open:
    on:
      REPLY:
        - to: met
          if: now - ctx.opened_at <= 4h
          do: [{assign: {answered_in: now - ctx.opened_at}}]
        - {to: breached}
      NOTE: {if: now - ctx.opened_at < 1h, else: NOTE_TOO_LATE}
    after:
      - {at: now + 1d, to: breached, do: [{emit: {type: Breached, payload: {at: now}}}]}
  met: {final: true}
  breached: {final: true}
"""


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def test_steps_read_the_runners_clock_and_replay_it_after_a_restart(store_url: str) -> None:
    clock = Clock(T0)
    runner = Runner(chart_from(SLA), open_store(store_url), clock=clock)
    runner.create("t-1")
    runner.create("t-2")
    clock.now = T0 + HOUR
    assert runner.apply("t-1", "e1", "OPEN", {"n": 1}).status is OutcomeStatus.APPLIED
    assert runner.apply("t-2", "e1", "OPEN", {"n": 2}).status is OutcomeStatus.APPLIED
    clock.now = T0 + 3 * HOUR
    late = runner.apply("t-1", "e-note", "NOTE")
    assert (late.status, late.reason) == (OutcomeStatus.REJECTED, "NOTE_TOO_LATE")
    assert runner.apply("t-1", "e2", "REPLY").status is OutcomeStatus.APPLIED
    live = dict(runner.load("t-1").state.context)
    assert live == {"opened_at": T0 + HOUR, "answered_in": 2 * HOUR, "key": f"t-1-{T0 + HOUR}"}
    (due,) = runner.load("t-2").state.timers
    assert due.due_ms == T0 + HOUR + 24 * HOUR
    runner.store.close()

    # a restart: another runner, its clock a week later
    later = Clock(T0 + 7 * 24 * HOUR)
    again = Runner(chart_from(SLA), open_store(store_url), clock=later)
    assert dict(again.load("t-1").state.context) == live
    rebuilt = again.rebuild("t-1").state
    assert rebuilt is not None and dict(rebuilt.context) == live
    assert again.verify("t-1").ok and again.verify("t-2").ok  # the late NOTE included
    (fired,) = again.fire_due()
    assert [dict(m.payload) for m in fired.emitted] == [{"at": later.now}]
    assert again.load("t-2").state.is_active("breached")
    assert again.verify("t-2").ok
    again.store.close()

"""A cancelled child's armed timers are cancelled with it: in the same transaction as the
step that cancelled it (both stores), and in the Simulator; `verify` flags a timer row
left armed for a cancelled child (one stored before they were cancelled)."""

from __future__ import annotations

from runner_charts import chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.timers import timer_row
from statekit.testing import FamilySimulator

WATCH = """
statechart: watch
version: 1
description: Keeps a reminder running while it waits.
events:
  stop: {}
initial: waiting
states:
  waiting:
    invoke: {id: remind, chart: reminder}
    on:
      stop: stopped
  stopped: {final: true}
"""

REMINDER = """
statechart: reminder
version: 1
description: Reminds after a minute, and nags in an hour.
events:
  nag: {}
initial: quiet
states:
  quiet:
    entry: [{send: {event: nag, delay: 1h}}]
    after:
      1m: reminded
    on:
      nag: reminded
  reminded: {}
"""

CHILD = "w1/remind/0"
LATER = 10 * 3_600_000


def test_the_simulator_cancels_a_cancelled_childs_timers() -> None:
    sim = FamilySimulator([chart_from(WATCH), chart_from(REMINDER)])
    sim.start("watch", "w1")
    assert len(sim.member(CHILD).state.timers) == 2
    sim.send("stop", to="w1")
    assert sim.status(CHILD).value == "cancelled"
    assert sim.member(CHILD).state.timers == ()
    assert sim.advance(LATER) == []


def test_the_runner_cancels_a_cancelled_childs_timers_in_the_same_transaction(
    store_url: str,
) -> None:
    store = open_store(store_url)
    watch, reminder = chart_from(WATCH), chart_from(REMINDER)
    runner = Runner(watch, store, charts=[reminder], clock=lambda: 0)
    runner.create("w1")
    armed = runner.load(CHILD).state.timers
    assert len(armed) == len(store.timers(CHILD)) == 2
    assert runner.apply("w1", "e1", "stop").applied
    assert [link.status for link in store.children("w1")] == ["cancelled"]
    assert store.timers(CHILD) == []  # gone with the step that cancelled it
    assert runner.load(CHILD).state.timers == ()
    assert runner.verify(CHILD).ok and runner.verify("w1").ok
    # nothing of it is due any more: no delivery, nothing reported
    worker = Runner(reminder, store, clock=lambda: LATER)
    assert worker.fire_due() == [] and worker.timer_problems == {}
    # a timer row left armed for a cancelled child (stored before they were cancelled)
    with store.write():
        store.insert_timers([timer_row(CHILD, armed[0], 0)])
    report = runner.verify(CHILD)
    assert not report.ok
    assert [d for d in report.differences if "armed timer" in d] == [
        f"family: instance {CHILD!r}: armed timer {armed[0].id!r} of a cancelled child "
        "(its timers are cancelled with it)"
    ]

"""An eventless timer loop (a timer whose delivery arms a timer due at once again) ends:
`statekit worker --once` delivers it at most `MAX_REDELIVERIES_AT_ONCE` times per
instance, parks it (durably: `test_worker_loop_parking`), reports it and exits 1 while
the other instances' timers still fire; the `Simulator` stops it with `SimulatorError`.
Both stores."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from runner_charts import chart_from, write_chart

from statekit.cli.timer_commands import MAX_REDELIVERIES_AT_ONCE, Worker
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import Simulator, SimulatorError

LOOPS = """
statechart: loops
context:
  n: {type: integer, default: 0}
events:
  Go: {}
  Spin: {}
  Ping: {}
  Calm: {}
initial: idle
states:
  idle:
    on:
      Go: spinning
      Calm: once
      Spin: {do: [{send: {event: Ping, delay: ctx.n - 1 - ctx.n, id: p}}]}
      Ping: {do: [{assign: {n: ctx.n + 1}}, {send: {event: Ping, delay: ctx.n - 1 - ctx.n, id: p}}]}
  spinning:
    after:
      0ms: spinning
  once:
    after:
      5ms: idle
"""


@pytest.mark.parametrize("start", ["Go", "Spin"])
def test_worker_once_exits_with_bounded_deliveries(
    store_url: str, tmp_path: Path, start: str
) -> None:
    runner = Runner(chart_from(LOOPS), open_store(store_url), clock=lambda: 1_000)
    runner.create("loop")
    assert runner.apply("loop", "e1", start, {}).applied
    runner.create("calm")  # an instance with one ordinary due timer
    assert runner.apply("calm", "e1", "Calm", {}).applied
    runner.store.close()
    chart = str(write_chart(LOOPS, tmp_path, "loops"))
    done = subprocess.run(
        [sys.executable, "-m", "statekit", "worker", "--db", store_url, "--chart", chart, "--once"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert len(lines) == MAX_REDELIVERIES_AT_ONCE + 2  # the loop, its parking, "calm"
    assert "MAX_REDELIVERIES_AT_ONCE" in done.stderr and "'loop'" in done.stderr
    assert "Traceback" not in done.stderr
    assert [x["state"] for x in lines if x["instance"] == "calm"] == [["idle"]]
    again = Runner(chart_from(LOOPS), open_store(store_url))
    assert again.load("loop").state.timers == ()  # parked: consumed
    assert again.verify("loop").ok


def test_the_simulator_stops_the_loop() -> None:
    sim = Simulator(chart_from(LOOPS))
    sim.send("Go")
    with pytest.raises(SimulatorError, match="re-arm itself due at once"):
        sim.advance(0)


def test_a_running_worker_goes_idle_instead_of_spinning(store_url: str) -> None:
    """Without --once the same bound holds between two idle moments: the loop's rounds end
    (a round delivers the re-armed timer once), the worker goes idle, the loop is reported."""
    runner = Runner(chart_from(LOOPS), open_store(store_url))
    runner.create("loop")
    assert runner.apply("loop", "e1", "Go", {}).applied
    out, err = io.StringIO(), io.StringIO()
    worker = Worker(runner.store, [runner], out, err)
    rounds = 0
    while worker.round():
        rounds += 1
        assert rounds <= MAX_REDELIVERIES_AT_ONCE, "the worker never went idle"
    assert len(out.getvalue().splitlines()) == MAX_REDELIVERIES_AT_ONCE + 1  # and parked
    assert worker.problems == 1 and "MAX_REDELIVERIES_AT_ONCE" in err.getvalue()
    assert runner.load("loop").state.timers == () and runner.verify("loop").ok

"""The children a step starts and cancels come from the states its microsteps exited and
entered, which the step keeps for a chart that invokes (no evidence built to find them):
on every way a macrostep runs (the initial one, the memo's data-free ones, compiled ones
with and without timers, the general loop), they equal what the step's evidence says."""

from __future__ import annotations

from typing import Any

import pytest
from runner_charts import chart_from

from statekit.engine.chart import Chart
from statekit.engine.invocation_changes import invocation_changes
from statekit.engine.result import Result

PARENT = """
statechart: parent
version: 1
description: Starts, restarts and stops a child, in every kind of macrostep.
context:
  n: {type: integer, default: 0}
events:
  go: {}
  go_if: {n: integer}
  restart: {}
  stop: {}
  tick: {}
initial: watching
states:
  watching:
    invoke: {id: first, chart: child}
    on:
      go: running
      go_if: {to: running, if: event.n > ctx.n, do: [{assign: {n: event.n}}]}
  running:
    invoke:
      - {id: worker, chart: child, input: {n: ctx.n}}
      - {id: helper, chart: child}
    after:
      1m: watching
    on:
      restart: {to: running, do: [{send: {event: tick, delay: 1s}}]}
      stop: watching
      tick: {}
"""

STEPS: list[tuple[str, dict[str, Any]]] = [
    ("go", {}),
    ("stop", {}),
    ("go_if", {"n": 3}),
    ("restart", {}),
    ("restart", {}),
    ("stop", {}),
    ("go", {}),
]


def _from_evidence(chart: Chart, result: Result) -> tuple[object, object]:
    state = result.state
    return invocation_changes(chart.ir, result.evidence, state.context, state.active_ids)


@pytest.mark.parametrize("fire_timer", [False, True])
def test_starts_and_cancels_equal_what_the_evidence_says(fire_timer: bool) -> None:
    chart = chart_from(PARENT)
    first = chart.initialize(now_ms=0)
    results = [first]
    state = first.state
    for event, payload in STEPS:
        result = chart.send(state, event, payload, now_ms=0)
        assert result.applied, (event, result.reason)
        results.append(result)
        state = result.state
    if fire_timer:
        (timer,) = [t for t in state.timers if t.event == "1m" or t.id.startswith("after")][:1]
        results.append(chart.fire(state, timer.id, generation=timer.generation, now_ms=60_000))
    seen = 0
    for result in results:
        changes = (result.invocations_started, result.invocations_cancelled)
        seen += len(changes[0]) + len(changes[1])
        assert changes == _from_evidence(chart, result)
    assert seen >= 12  # (the table starts and cancels children at most of its steps)

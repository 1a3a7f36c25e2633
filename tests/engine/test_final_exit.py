"""Reaching a top-level final state ends the instance: its `exit` effects run then, right
after its `entry`, in the same step, while the configuration stays the final one (later
events are TERMINAL_STATE). A child's `send: {to: parent}` from there reaches the parent
before its `done.invoke.<id>`."""

from __future__ import annotations

from pathlib import Path

import pytest
from family_charts import load_text

from statekit.engine.result import Status
from statekit.testing import FamilySimulator

ENDING = """\
statechart: ending
context:
  trail: {type: string, default: ""}
events:
  GO: {}
  NEST: {}
initial: INITIAL
states:
  running:
    on:
      GO: over
      NEST: nested
  nested:
    initial: inner
    states:
      inner:
        final: true
        exit: [{assign: {trail: "ctx.trail + 'inner-exit;'"}}]
    done: {to: over, do: [{assign: {trail: "ctx.trail + 'done;'"}}]}
  over:
    final: true
    entry:
      - assign: {trail: "ctx.trail + 'entry;'"}
      - emit: {type: entered}
    exit:
      - assign: {trail: "ctx.trail + 'exit;'"}
      - emit: {type: left}
"""


@pytest.mark.parametrize(
    ("initial", "events", "trail"),
    [
        ("running", ["GO"], "entry;exit;"),
        ("over", [], "entry;exit;"),  # the initial step ends it
        ("running", ["NEST"], "inner-exit;done;entry;exit;"),  # a nested final is left
    ],
)
def test_the_exit_of_the_final_state_that_ends_the_chart_runs_after_its_entry(
    initial: str, events: list[str], trail: str, tmp_path: Path
) -> None:
    chart = load_text(tmp_path, ENDING.replace("INITIAL", initial))
    result = chart.initialize()
    for event in events:
        result = chart.send(result.state, event)
        assert result.status is Status.APPLIED
    assert result.state.configuration == frozenset({"over"})
    assert result.state.context["trail"] == trail
    assert [m.type for m in result.emitted] == ["entered", "left"]
    later = chart.send(result.state, "GO")
    assert (later.status, later.reason) == (Status.REJECTED, "TERMINAL_STATE")


PARENT = """\
statechart: waiter
events:
  last_words: {}
initial: waiting
states:
  waiting:
    invoke: {id: worker, chart: worker}
    on:
      last_words: heard
      done.invoke.worker: deaf
  heard:
    on:
      done.invoke.worker: done
  deaf: {final: true}
  done: {final: true}
"""

CHILD = """\
statechart: worker
events:
  finish: {}
initial: working
states:
  working:
    on:
      finish: finished
  finished:
    final: true
    exit: [{send: {to: parent, event: last_words}}]
"""


def test_a_childs_last_words_arrive_before_its_done_invoke(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, PARENT), load_text(tmp_path, CHILD)], now_ms=0)
    sim.start("waiter", "w")
    step = sim.send("finish", to="w/worker/0")
    to_parent = [r.delivery.event for r in step.records if r.delivery.target == "w"]
    assert to_parent == ["last_words", "done.invoke.worker"]
    assert sim.member("w").state.configuration == frozenset({"done"})

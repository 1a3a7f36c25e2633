"""`_event.sendid` and `_event.origintype`: an event a `send` delivered names the send's
`id:` and SCXML's event processor; any other event (a `raise`, an API call) has null
for both (an `after` timer's transitions read no event at all). The same in the
Simulator and the durable runner (whose `verify` replays the history to the same
state)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chart_helpers import compile_text, machine

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import Simulator

PROCESSOR = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"

CHART = """
statechart: sends
context:
  named: {type: string, nullable: true, default: "unset"}
  named_by: {type: string, nullable: true, default: "unset"}
  unnamed: {type: string, nullable: true, default: "unset"}
  delayed: {type: string, nullable: true, default: "unset"}
  raised: {type: string, nullable: true, default: "unset"}
  raised_id: {type: string, nullable: true, default: "unset"}
  outside: {type: string, nullable: true, default: "unset"}
  timer: {type: string, nullable: true, default: "unset"}
events:
  GO: {}
  NAMED: {}
  UNNAMED: {}
  LATE: {}
  LOCAL: {}
initial: a
states:
  a:
    on:
      GO:
        to: b
        do:
          - send: {event: NAMED, id: first}
          - send: {event: UNNAMED}
          - send: {event: LATE, delay: 1s, id: later}
          - raise: LOCAL
      LATE: {do: [{assign: {outside: _event.origintype}}]}
  b:
    on:
      NAMED: {do: [{assign: {named: _event.sendid, named_by: _event.origintype}}]}
      UNNAMED: {do: [{assign: {unnamed: _event.sendid}}]}
      LOCAL: {do: [{assign: {raised: _event.origintype, raised_id: _event.sendid}}]}
      LATE: {to: c, do: [{assign: {delayed: _event.sendid}}]}
  c:
    after:
      1s: {to: d}
  d: {final: true}
"""

EXPECTED: dict[str, Any] = {
    "named": "first",
    "named_by": PROCESSOR,
    "unnamed": None,
    "delayed": "later",
    "raised": None,
    "raised_id": None,
    "outside": "unset",
    "timer": "unset",
}


def test_the_simulator_tells_each_send_apart() -> None:
    simulator = Simulator(machine(CHART))
    simulator.send("GO")
    simulator.advance(5000)
    assert simulator.state.configuration == frozenset({"d"})
    assert dict(simulator.state.context) == EXPECTED


def test_an_event_from_outside_has_neither() -> None:
    simulator = Simulator(machine(CHART))
    simulator.send("LATE")
    assert simulator.state.context["outside"] is None


def test_the_durable_runner_gives_the_same_and_verifies(tmp_path: Path) -> None:
    chart_file = tmp_path / "sends.yaml"
    chart_file.write_text(CHART, encoding="utf-8")
    clock = [1_000_000]
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    runner = Runner(statekit.load(chart_file), store, clock=lambda: clock[0])
    runner.create("one")
    runner.apply("one", "go-1", "GO")
    for _ in range(3):
        clock[0] += 1000
        runner.fire_due(clock[0])
    instance = runner.load("one")
    assert dict(instance.state.context) == EXPECTED
    assert instance.state.configuration == frozenset({"d"})
    report = runner.verify("one")
    assert not report.differences, report.differences


@pytest.mark.parametrize("field", ["sendid", "origintype"])
def test_both_are_nullable_strings(field: str) -> None:
    text = CHART.replace("named: _event.sendid", f"named: _event.{field} + 'x'")
    result = compile_text(text)
    assert any(d.slug == "expression-type" for d in result.diagnostics), result.diagnostics

"""The public `Chart`: load, start (with context overrides), initialize, send."""

from __future__ import annotations

from pathlib import Path

import pytest
from chart_helpers import chart_of, machine

import statekit
from statekit.engine.chart import START_EVENT, Chart, StartError
from statekit.engine.result import Status

MACHINES = Path(__file__).resolve().parents[2] / "machines"

ENTRY = """
statechart: entry
version: 3
context:
  n: {type: integer, default: 1}
  who: {enum: [a, b], nullable: true, default: null}
events: {GO: {}}
initial: s
states:
  s:
    entry: [{emit: {type: Hello, payload: {n: ctx.n}}}]
    always: {to: t, if: ctx.n > 5}
  t: {}
invariants:
  bounded: {assert: ctx.n < 100}
"""


def test_load_returns_a_chart_and_compile_the_raw_ir() -> None:
    chart = statekit.load(MACHINES / "payment.yaml")
    assert isinstance(chart, statekit.Chart)
    assert (chart.name, chart.version) == ("payment", 2)
    ir = statekit.compile(MACHINES / "payment.yaml")
    assert isinstance(ir, statekit.CompiledChart)
    assert chart.digest == ir.digest == chart.ir.digest
    assert "payment" in repr(chart)
    with pytest.raises(statekit.CompileError):
        statekit.load(MACHINES / "missing.yaml")


def test_start_uses_defaults_and_is_shared() -> None:
    chart = machine(ENTRY)
    s0 = chart.start()
    assert s0.configuration == {"s"} and s0.context == {"n": 1, "who": None}
    assert chart.start() is s0


def test_context_overrides_are_checked_and_run_the_initial_macrostep() -> None:
    chart = machine(ENTRY)
    state = chart.start({"n": 7, "who": "a"})
    assert state.configuration == {"t"}  # the eventless transition saw the override
    with pytest.raises(StartError, match="field 'n': expected integer, got boolean"):
        chart.start({"n": True})
    with pytest.raises(StartError, match=r"unknown context field\(s\) 'm'"):
        chart.start({"m": 1})
    with pytest.raises(StartError, match="invariant 'bounded'"):
        chart.start({"n": 500})


def test_initialize_reports_the_initial_macrostep() -> None:
    chart = machine(ENTRY)
    result = chart.initialize(event_id="create-1")
    assert result.status is Status.APPLIED and result.event == START_EVENT
    assert [(m.message_id, m.type, dict(m.payload)) for m in result.emitted] == [
        ("create-1/0", "Hello", {"n": 1})
    ]
    assert result.evidence[0].entered == ("s",)


def test_a_livelock_at_start_is_a_start_error() -> None:
    chart = Chart(
        chart_of(
            """
            statechart: spin
            events: {GO: {}}
            initial: a
            states: {a: {always: b}, b: {always: a}}
            """
        ),
        max_microsteps=5,
    )
    assert chart.max_microsteps == 5
    with pytest.raises(StartError, match="within 5 microsteps"):
        chart.start()
    with pytest.raises(ValueError):
        Chart(chart.ir, max_microsteps=0)

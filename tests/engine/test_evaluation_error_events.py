"""`on_evaluation_error: raise`: an expression that fails at run time raises the internal
event `error.execution` {reason} in the same macrostep (SCXML): the failing block of
effects stops, the rest of the transition proceeds, a failing guard is false. Without
the key, the step is rejected with EVALUATION_ERROR, as before."""

from __future__ import annotations

from typing import Any

import pytest
from chart_helpers import compile_text, machine

from statekit.engine.result import EVALUATION_ERROR, Status

GUARD_FAILED = "GUARD_FAILED"

CHART = """
statechart: errors
on_evaluation_error: raise
context:
  d: {type: integer, default: 0}
  n: {type: integer, default: 0}
  entered: {type: integer, default: 0}
  why: {type: string, default: ""}
  kind: {type: string, default: ""}
events:
  GO: {}
  CHECK: {}
  ONLY: {}
initial: a
states:
  a:
    on:
      GO:
        to: b
        do:
          - assign: {n: 1}
          - assign: {n: 10 // ctx.d}
          - assign: {n: 99}
      CHECK:
        - {to: checked, if: 10 // ctx.d > 1}
        - {to: fallback}
      ONLY: {to: checked, if: 10 // ctx.d > 1}
  b:
    entry: [{assign: {entered: 1}}]
    on:
      error.execution:
        to: failed
        do: [{assign: {why: event.reason, kind: _event.type}}]
  checked: {final: true}
  fallback:
    on:
      error.execution: {to: failed, do: [{assign: {why: _event.data.reason}}]}
  failed: {final: true}
"""


def _context(result: Any) -> dict[str, Any]:
    return dict(result.state.context)


def test_a_failing_effect_stops_its_block_and_the_transition_proceeds() -> None:
    chart = machine(CHART)
    result = chart.send(chart.start(), "GO", {})
    assert result.status is Status.APPLIED
    context = _context(result)
    assert context["n"] == 1  # the effect before the failure is kept, the one after not run
    assert context["entered"] == 1  # the target's entry (another block) ran
    assert result.state.configuration == frozenset({"failed"})  # error.execution handled
    assert context["why"].startswith("assign to ctx.n `10 // ctx.d` at line 21, column 25")
    assert "ZeroDivisionError" in context["why"]
    assert context["kind"] == "platform"
    assert [m.event for m in result.evidence] == ["GO", "error.execution"]


def test_a_failing_guard_is_false_and_raises_error_execution() -> None:
    chart = machine(CHART)
    result = chart.send(chart.start(), "CHECK", {})
    assert result.status is Status.APPLIED
    assert result.state.configuration == frozenset({"failed"})  # fallback, then the error
    assert "'if' `10 // ctx.d > 1`" in _context(result)["why"]


def test_an_error_nothing_handles_is_dropped_and_the_event_classified_as_before() -> None:
    chart = machine(CHART)
    result = chart.send(chart.start(), "ONLY", {})
    assert (result.status, result.reason) == (Status.REJECTED, GUARD_FAILED)
    assert result.state.configuration == frozenset({"a"})


@pytest.mark.parametrize("event", ["GO", "CHECK", "ONLY"])
def test_without_the_key_an_evaluation_error_rejects_the_event(event: str) -> None:
    plain = CHART.replace("on_evaluation_error: raise\n", "").replace(
        "      error.execution:\n        to: failed\n"
        "        do: [{assign: {why: event.reason, kind: _event.type}}]\n",
        "      GO: a\n",
    )
    plain = plain.replace(
        "    on:\n      error.execution: {to: failed, do: [{assign: {why: _event.data.reason}}]}\n",
        "    reject: {'*': DONE}\n",
    )
    chart = machine(plain)
    result = chart.send(chart.start(), event, {})
    assert (result.status, result.reason) == (Status.REJECTED, EVALUATION_ERROR)
    assert result.state.configuration == frozenset({"a"})


def test_error_execution_needs_the_key_and_has_a_typed_reason() -> None:
    without = CHART.replace("on_evaluation_error: raise\n", "")
    result = compile_text(without)
    assert result.chart is None
    assert any(
        d.slug == "unknown-event" and "error.execution" in d.message for d in result.diagnostics
    ), result.diagnostics
    typo = compile_text(CHART.replace("why: event.reason", "why: event.reasn"))
    assert typo.chart is None
    (found,) = typo.diagnostics
    assert "event error.execution has no field 'reasn'" in found.message
    assert (found.span.line, found.span.column) == (32, 29)


def test_a_failing_entry_action_of_the_initial_configuration_raises_too() -> None:
    chart = machine(
        """
statechart: starts
on_evaluation_error: raise
context:
  d: {type: integer, default: 0}
  n: {type: integer, default: 0}
initial: a
states:
  a:
    entry: [{assign: {n: 1 // ctx.d}}]
    on:
      error.execution: b
  b: {final: true}
"""
    )
    assert chart.start().configuration == frozenset({"b"})


RAISES = """
statechart: raises
on_evaluation_error: raise
context:
  why: {type: string, default: ""}
  kind: {type: string, default: ""}
events:
  CHECK: {}
initial: a
states:
  a:
    on:
      CHECK:
        do: [{raise: {event: error.execution, payload: {reason: "'out of stock'"}}}]
      error.execution:
        to: b
        do: [{assign: {why: event.reason, kind: _event.type}}]
  b: {final: true}
"""


def test_a_chart_raises_error_execution_itself_like_the_engine_does() -> None:
    chart = machine(RAISES)
    result = chart.send(chart.start(), "CHECK", {})
    assert result.status is Status.APPLIED
    assert _context(result) == {"why": "out of stock", "kind": "platform"}
    assert [m.event for m in result.evidence] == ["CHECK", "error.execution"]
    without = compile_text(RAISES.replace("on_evaluation_error: raise\n", ""))
    assert without.chart is None
    assert any(d.slug == "unknown-event" for d in without.diagnostics), without.diagnostics
    untyped = compile_text(RAISES.replace("reason: \"'out of stock'\"", "reason: 1"))
    assert untyped.chart is None

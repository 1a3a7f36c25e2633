"""An expression written in many places is compiled once per scope, yet each place keeps
its own span, its own diagnostics and its own behaviour (`model.expression_memo`)."""

from __future__ import annotations

from statekit.compiler.ir import Assign
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart

REPEATED = """\
statechart: repeated
version: 1
context:
  total: {type: integer, default: 0}
  label: {type: string, default: ""}
events:
  ADD: {n: integer}
  NAME: {n: string}
initial: a
states:
  a:
    on:
      ADD: {to: b, do: [{assign: {total: event.n + ctx.total}}]}
      NAME: {to: b, do: [{assign: {label: event.n + ctx.label}}]}
  b:
    on:
      ADD: {to: c, do: [{assign: {total: event.n + ctx.total}}]}
      NAME: {to: c, do: [{assign: {total: event.n + ctx.total}}]}
  c:
    on:
      ADD: {to: a, do: [{assign: {total:   event.n + ctx.total}}]}
      NAME: {to: a, do: [{assign: {total: event.n + ctx.total}}]}
"""


def test_each_bad_repetition_is_reported_at_its_own_place() -> None:
    result = compile_source(REPEATED, "repeated.yaml")
    # `event.n + ctx.total` is an integer under ADD, a string plus an integer under NAME
    places = [(d.span.line, d.span.column) for d in result.errors]
    assert places == [(18, 43), (22, 43)]


def test_each_good_repetition_keeps_its_own_span_and_runs() -> None:
    fixed = REPEATED.replace(
        "NAME: {to: c, do: [{assign: {total: event.n + ctx.total}}]}",
        "NAME: {to: c}",
    ).replace("NAME: {to: a, do: [{assign: {total: event.n + ctx.total}}]}", "NAME: {to: a}")
    result = compile_source(fixed, "repeated.yaml")
    assert result.errors == () and result.chart is not None
    spans = [
        (expression.span.line, expression.span.column)
        for transition in result.chart.transitions
        for effect in transition.effects
        if isinstance(effect, Assign)
        for _, expression in effect.assignments
    ]
    assert spans == [(13, 42), (14, 43), (17, 42), (21, 44)]
    chart = Chart(result.chart)
    state = chart.start()
    for n in (1, 10, 100):
        state = chart.send(state, "ADD", {"n": n}).state
    assert state.context["total"] == 111

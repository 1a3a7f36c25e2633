"""The one guard evaluator and the one value evaluator: results, range checks, error roles."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of

from statekit.compiler.invariant_ir import ExpressionInvariant
from statekit.compiler.ir import Assign
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import (
    computed_value,
    guard_passes,
    invariant_holds,
    out_of_range,
)
from statekit.engine.validation import INT_MAX

CHART = """
statechart: e
context: {n: integer}
events: {GO: {d: integer}}
guards:
  divides: {if: "ctx.n // event.d > 0"}
invariants:
  positive: {assert: ctx.n >= 0}
initial: a
states:
  a:
    on:
      GO:
        to: b
        guard: divides
        do: [{assign: {n: "ctx.n // event.d"}}]
  b: {}
"""


def _parts() -> tuple[object, Assign, ExpressionInvariant]:
    chart = chart_of(CHART)
    transition = next(t for t in chart.transitions if t.event == "GO")
    (effect,) = transition.effects
    assert isinstance(effect, Assign)
    (invariant,) = chart.invariants
    assert isinstance(invariant, ExpressionInvariant)
    return transition.guards[0], effect, invariant


def test_a_guard_holds_or_not_and_a_raising_guard_names_itself() -> None:
    check, _effect, _inv = _parts()
    assert guard_passes(check, {"n": 4}, {"d": 2}, frozenset())  # type: ignore[arg-type]
    assert not guard_passes(check, {"n": 0}, {"d": 2}, frozenset())  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match=r"guard 'divides'.*ZeroDivisionError"):
        guard_passes(check, {"n": 4}, {"d": 0}, frozenset())  # type: ignore[arg-type]


def test_a_computed_value_is_range_checked_and_errors_carry_the_role() -> None:
    _check, effect, _inv = _parts()
    ((field, expr),) = effect.assignments
    assert computed_value("assign to ctx.n", expr, {"n": 9}, {"d": 2}, frozenset()) == 4
    with pytest.raises(EvaluationError, match=r"assign to ctx\.n"):
        computed_value("assign to ctx.n", expr, {"n": 9}, {"d": 0}, frozenset())
    assert out_of_range(INT_MAX) is None and out_of_range(INT_MAX + 1) is not None
    assert out_of_range(float("inf")) is not None and out_of_range(1.5) is None
    assert field == "n"


def test_an_invariant_holds_or_not() -> None:
    _check, _effect, invariant = _parts()
    assert invariant_holds(invariant, {"n": 0}, frozenset())
    assert not invariant_holds(invariant, {"n": -1}, frozenset())

"""The one guard evaluator and the one value evaluator of the engine.

Every guard (named guards and `if`), every value an effect computes
(`assign`, `emit` and `raise` fields) and every `assert:` invariant is
evaluated here. An expression that raises becomes an `EvaluationError`
naming its role; a computed value must have a canonical JSON form and a
bounded size: a float must be finite and an integer must fit in 64 bits
(signed), else the step fails with `EvaluationError` (repeated `x ** 64`
would otherwise grow without bound, and Python refuses to print integers of
more than 4,300 digits).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from statekit.compiler.expressions.expression import Expression
from statekit.compiler.invariant_ir import ExpressionInvariant
from statekit.compiler.ir import GuardCheck
from statekit.engine.errors import EvaluationError
from statekit.engine.validation import EMPTY, INT_MAX, INT_MIN


def first_failing_guard(
    guards: tuple[GuardCheck, ...],
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    active: frozenset[int],
) -> GuardCheck | None:
    """The first of a transition's guards that does not hold, in order, or None when all
    hold; `EvaluationError` when one raises (the rest are not evaluated)."""
    for check in guards:
        try:
            if not check.expression.evaluate(context, payload, active):
                return check
        except Exception as exc:
            role = f"guard '{check.name}'" if check.name else "'if'"
            raise EvaluationError.from_exception(role, check.expression, exc) from exc
    return None


def guard_passes(
    check: GuardCheck,
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    active: frozenset[int],
) -> bool:
    """Whether one guard holds; `EvaluationError` when its expression raises."""
    return first_failing_guard((check,), context, payload, active) is None


def out_of_range(value: Any) -> str | None:
    """Why a computed value cannot be kept (non-finite, beyond 64 bits), or None."""
    cls = value.__class__
    if cls is float and not math.isfinite(value):
        return "the result is not a finite number"
    if cls is int and not INT_MIN <= value <= INT_MAX:
        return "the result does not fit in a 64-bit integer"
    return None


def computed_value(
    role: str,
    expression: Expression,
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    active: frozenset[int],
) -> Any:
    """The value of an effect's expression, checked for range; `EvaluationError` naming
    `role` when it raises or is out of range."""
    try:
        value = expression.evaluate(context, payload, active)
    except Exception as exc:
        raise EvaluationError.from_exception(role, expression, exc) from exc
    cls = value.__class__
    if (cls is int and not INT_MIN <= value <= INT_MAX) or (
        cls is float and not math.isfinite(value)
    ):
        raise EvaluationError(role, expression, out_of_range(value) or "")
    return value


def assigned_value(
    field: str,
    expression: Expression,
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    active: frozenset[int],
) -> Any:
    """`computed_value` for an `assign` to `field` (its role named only on failure, since
    assignments are the most frequent effect)."""
    try:
        value = expression.evaluate(context, payload, active)
    except Exception as exc:
        raise EvaluationError.from_exception(f"assign to ctx.{field}", expression, exc) from exc
    cls = value.__class__
    if (cls is int and not INT_MIN <= value <= INT_MAX) or (
        cls is float and not math.isfinite(value)
    ):
        raise EvaluationError(f"assign to ctx.{field}", expression, out_of_range(value) or "")
    return value


def invariant_holds(
    invariant: ExpressionInvariant, context: Mapping[str, Any], active: frozenset[int]
) -> bool:
    """Whether an `assert:` invariant holds (no event in scope); `EvaluationError` when
    its expression raises."""
    return first_broken_assertion((invariant,), context, active) is None


def first_broken_assertion(
    invariants: tuple[ExpressionInvariant, ...],
    context: Mapping[str, Any],
    active: frozenset[int],
) -> str | None:
    """The name of the first `assert:` invariant that does not hold, in order, or None
    (no event in scope); `EvaluationError` when one raises. One call checks them all:
    this runs after every applied event."""
    for invariant in invariants:
        try:
            if not invariant.expression.evaluate(context, EMPTY, active):
                return invariant.name
        except Exception as exc:
            role = f"invariant '{invariant.name}'"
            raise EvaluationError.from_exception(role, invariant.expression, exc) from exc
    return None


Evaluate = Callable[[Mapping[str, Any], Mapping[str, Any], frozenset[int]], Any]
"""A fused value evaluator: (context, payload, active ids) -> value."""


def checked(expression: Expression, fail: Evaluate) -> Evaluate:
    """`expression` as one closure that returns its value when it evaluates in range,
    and otherwise calls `fail` (`assigned_value` or `computed_value` bound to its role),
    which evaluates it again and raises the `EvaluationError` those functions word:
    expressions are pure, so the second evaluation fails the same way. This is the
    form the compiled macrosteps (`statekit.engine.compiled_macrostep`) call per
    effect: no role string is built and no extra frame is entered when it succeeds."""
    evaluate = expression.evaluate
    isfinite = math.isfinite

    def value_of(
        context: Mapping[str, Any], payload: Mapping[str, Any], active: frozenset[int]
    ) -> Any:
        try:
            value = evaluate(context, payload, active)
        except Exception:
            return fail(context, payload, active)
        cls = value.__class__
        if (cls is int and not INT_MIN <= value <= INT_MAX) or (
            cls is float and not isfinite(value)
        ):
            return fail(context, payload, active)
        return value

    return value_of


def assigner(field: str, expression: Expression) -> Evaluate:
    """`assigned_value(field, expression, ...)` as one closure (see `checked`)."""
    return checked(expression, lambda c, p, a: assigned_value(field, expression, c, p, a))


def computer(role: str, expression: Expression) -> Evaluate:
    """`computed_value(role, expression, ...)` as one closure (see `checked`)."""
    return checked(expression, lambda c, p, a: computed_value(role, expression, c, p, a))

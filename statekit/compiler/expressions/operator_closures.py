"""The operator tables of the compiled expressions: for each shape of operands, one closure
per comparison or arithmetic operator.

`statekit.compiler.expressions.closures` picks a table by the shape of a node's operands
(a context field `ctx`, an event field `ev`, a literal `lit`, or any compiled evaluator
`fn`) and the closure by the operator, so that `ctx.x <= 3` runs as `c["x"] <= 3` without
generic dispatch. Every closure has the `Evaluator` signature `(ctx, payload, active)`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from statekit.compiler.expressions.evaluator import Evaluator
from statekit.compiler.expressions.tree import ArithOp, CompareOp

FLIPPED: dict[CompareOp, CompareOp] = {
    "==": "==",
    "!=": "!=",
    "<": ">",
    "<=": ">=",
    ">": "<",
    ">=": "<=",
}
"""Each comparison with its operands swapped: `k < x` is `x > k`."""

COMPARE_FUNCS: dict[CompareOp, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
"""Each comparison as a function, for the links of a chained comparison."""


def cmp_ctx_lit(f: str, k: Any) -> dict[CompareOp, Evaluator]:
    """The comparisons of a context field with a literal."""
    return {
        "==": lambda c, e, a: c[f] == k,
        "!=": lambda c, e, a: c[f] != k,
        "<": lambda c, e, a: c[f] < k,
        "<=": lambda c, e, a: c[f] <= k,
        ">": lambda c, e, a: c[f] > k,
        ">=": lambda c, e, a: c[f] >= k,
    }


def cmp_ev_lit(f: str, k: Any) -> dict[CompareOp, Evaluator]:
    """The comparisons of an event field with a literal."""
    return {
        "==": lambda c, e, a: e[f] == k,
        "!=": lambda c, e, a: e[f] != k,
        "<": lambda c, e, a: e[f] < k,
        "<=": lambda c, e, a: e[f] <= k,
        ">": lambda c, e, a: e[f] > k,
        ">=": lambda c, e, a: e[f] >= k,
    }


def cmp_fn_lit(x: Evaluator, k: Any) -> dict[CompareOp, Evaluator]:
    """The comparisons of an evaluator with a literal."""
    return {
        "==": lambda c, e, a: x(c, e, a) == k,
        "!=": lambda c, e, a: x(c, e, a) != k,
        "<": lambda c, e, a: x(c, e, a) < k,
        "<=": lambda c, e, a: x(c, e, a) <= k,
        ">": lambda c, e, a: x(c, e, a) > k,
        ">=": lambda c, e, a: x(c, e, a) >= k,
    }


def cmp_ev_ctx(f: str, g: str) -> dict[CompareOp, Evaluator]:
    """The comparisons of an event field with a context field."""
    return {
        "==": lambda c, e, a: e[f] == c[g],
        "!=": lambda c, e, a: e[f] != c[g],
        "<": lambda c, e, a: e[f] < c[g],
        "<=": lambda c, e, a: e[f] <= c[g],
        ">": lambda c, e, a: e[f] > c[g],
        ">=": lambda c, e, a: e[f] >= c[g],
    }


def cmp_ev_fn(f: str, y: Evaluator) -> dict[CompareOp, Evaluator]:
    """The comparisons of an event field with an evaluator."""
    return {
        "==": lambda c, e, a: e[f] == y(c, e, a),
        "!=": lambda c, e, a: e[f] != y(c, e, a),
        "<": lambda c, e, a: e[f] < y(c, e, a),
        "<=": lambda c, e, a: e[f] <= y(c, e, a),
        ">": lambda c, e, a: e[f] > y(c, e, a),
        ">=": lambda c, e, a: e[f] >= y(c, e, a),
    }


def cmp_ctx_fn(f: str, y: Evaluator) -> dict[CompareOp, Evaluator]:
    """The comparisons of a context field with an evaluator."""
    return {
        "==": lambda c, e, a: c[f] == y(c, e, a),
        "!=": lambda c, e, a: c[f] != y(c, e, a),
        "<": lambda c, e, a: c[f] < y(c, e, a),
        "<=": lambda c, e, a: c[f] <= y(c, e, a),
        ">": lambda c, e, a: c[f] > y(c, e, a),
        ">=": lambda c, e, a: c[f] >= y(c, e, a),
    }


def cmp_fn_fn(x: Evaluator, y: Evaluator) -> dict[CompareOp, Evaluator]:
    """The comparisons of an evaluator with an evaluator."""
    return {
        "==": lambda c, e, a: x(c, e, a) == y(c, e, a),
        "!=": lambda c, e, a: x(c, e, a) != y(c, e, a),
        "<": lambda c, e, a: x(c, e, a) < y(c, e, a),
        "<=": lambda c, e, a: x(c, e, a) <= y(c, e, a),
        ">": lambda c, e, a: x(c, e, a) > y(c, e, a),
        ">=": lambda c, e, a: x(c, e, a) >= y(c, e, a),
    }


def arith_ctx_lit(f: str, k: Any) -> dict[ArithOp, Evaluator]:
    """The arithmetic operators of a context field with a literal."""
    return {
        "+": lambda c, e, a: c[f] + k,
        "-": lambda c, e, a: c[f] - k,
        "*": lambda c, e, a: c[f] * k,
        "/": lambda c, e, a: c[f] / k,
        "//": lambda c, e, a: c[f] // k,
        "%": lambda c, e, a: c[f] % k,
        "**": lambda c, e, a: c[f] ** k,
    }


def arith_ev_lit(f: str, k: Any) -> dict[ArithOp, Evaluator]:
    """The arithmetic operators of an event field with a literal."""
    return {
        "+": lambda c, e, a: e[f] + k,
        "-": lambda c, e, a: e[f] - k,
        "*": lambda c, e, a: e[f] * k,
        "/": lambda c, e, a: e[f] / k,
        "//": lambda c, e, a: e[f] // k,
        "%": lambda c, e, a: e[f] % k,
        "**": lambda c, e, a: e[f] ** k,
    }


def arith_fn_lit(x: Evaluator, k: Any) -> dict[ArithOp, Evaluator]:
    """The arithmetic operators of an evaluator with a literal."""
    return {
        "+": lambda c, e, a: x(c, e, a) + k,
        "-": lambda c, e, a: x(c, e, a) - k,
        "*": lambda c, e, a: x(c, e, a) * k,
        "/": lambda c, e, a: x(c, e, a) / k,
        "//": lambda c, e, a: x(c, e, a) // k,
        "%": lambda c, e, a: x(c, e, a) % k,
        "**": lambda c, e, a: x(c, e, a) ** k,
    }


def arith_fn_fn(x: Evaluator, y: Evaluator) -> dict[ArithOp, Evaluator]:
    """The arithmetic operators of an evaluator with an evaluator."""
    return {
        "+": lambda c, e, a: x(c, e, a) + y(c, e, a),
        "-": lambda c, e, a: x(c, e, a) - y(c, e, a),
        "*": lambda c, e, a: x(c, e, a) * y(c, e, a),
        "/": lambda c, e, a: x(c, e, a) / y(c, e, a),
        "//": lambda c, e, a: x(c, e, a) // y(c, e, a),
        "%": lambda c, e, a: x(c, e, a) % y(c, e, a),
        "**": lambda c, e, a: x(c, e, a) ** y(c, e, a),
    }

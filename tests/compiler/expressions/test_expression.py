"""The safe expression language: allow-list, type checking, positions and evaluation.

The property tests generate random well-typed expressions from the allowed
grammar together with their value, computed by an independent reference
evaluation while the expression is generated (no `eval`), and check that the
compiled closures agree, including which arithmetic error is raised.
"""

from __future__ import annotations

import ast
import json
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from statekit.compiler import expressions
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.language import MAX_SOURCE_LENGTH
from statekit.compiler.expressions.scope import (
    DeferredEvent,
    ExpressionScope,
    NoEvent,
    TypedEvent,
)
from statekit.compiler.expressions.tree import (
    Active,
    BinOp,
    Compare,
    ContextRef,
    EventRef,
    Literal,
)
from statekit.compiler.value_types import (
    BOOLEAN,
    INTEGER,
    NULL,
    NUMBER,
    STRING,
    BaseType,
    ValueType,
)

ROLE = ValueType(BaseType.STRING, enum=("user", "support"))
COLOR = ValueType(BaseType.STRING, enum=("red", "green"))
LEVEL = ValueType(BaseType.INTEGER, enum=(1, 2, 3))
NULLABLE_INT = ValueType(BaseType.INTEGER, nullable=True)
NULLABLE_STR = ValueType(BaseType.STRING, nullable=True)

CONTEXT: dict[str, ValueType] = {
    "i": INTEGER,
    "j": INTEGER,
    "zero": INTEGER,
    "x": NUMBER,
    "s": STRING,
    "b": BOOLEAN,
    "paid": BOOLEAN,
    "n": NULLABLE_INT,
    "ref": NULLABLE_STR,
    "role": ROLE,
    "color": COLOR,
    "level": LEVEL,
}
EVENT: dict[str, ValueType] = {
    "amount": INTEGER,
    "attempt": INTEGER,
    "requester": ROLE,
    "maybe": NULLABLE_STR,
    "k": INTEGER,
    "t": STRING,
    "f": BOOLEAN,
}
STATES = {"done": 7, "other": 8, "a": 1, "b": 2, "c": 3}

CTX: dict[str, Any] = {
    "i": 3,
    "j": 4,
    "zero": 0,
    "x": 2.5,
    "s": "hey",
    "b": True,
    "paid": False,
    "n": None,
    "ref": None,
    "role": "user",
    "color": "red",
    "level": 2,
}
PAYLOAD: dict[str, Any] = {
    "amount": 7,
    "attempt": 2,
    "requester": "support",
    "maybe": None,
    "k": 5,
    "t": "tee",
    "f": False,
}
ACTIVE = frozenset({7})

LINE, COLUMN = 7, 11


def resolve(ref: str, span: SourceSpan) -> int | Diagnostic:
    if ref in STATES:
        return STATES[ref]
    return Diagnostic("unknown-state", Severity.ERROR, f"unknown state '{ref}'", span)


SCOPE = ExpressionScope(CONTEXT, TypedEvent(EVENT, "START_PAY"), resolve)
NO_EVENT = ExpressionScope(CONTEXT, NoEvent("entry actions run without a typed event"), resolve)
DEFERRED = ExpressionScope(CONTEXT, DeferredEvent(), resolve)


def span_for(source: str) -> SourceSpan:
    """The span of `source` written as a plain YAML scalar at LINE:COLUMN."""
    return SourceSpan("chart.yaml", LINE, COLUMN, LINE, COLUMN + len(source))


def compile_(
    source: str | int | float | bool | None,
    scope: ExpressionScope = SCOPE,
    expected: ValueType | None = None,
    what: str = "expression",
) -> Expression | tuple[Diagnostic, ...]:
    span = (
        span_for(source)
        if isinstance(source, str)
        else SourceSpan("chart.yaml", LINE, COLUMN, LINE, COLUMN + 1)
    )
    return compile_expression(source, span, scope, expected, what)


def ok(source: str | int | float | bool | None, **kwargs: Any) -> Expression:
    result = compile_(source, **kwargs)
    assert isinstance(result, Expression), [(d.slug, d.message) for d in result]
    return result


def errors(source: str | int | float | bool | None, **kwargs: Any) -> tuple[Diagnostic, ...]:
    result = compile_(source, **kwargs)
    assert isinstance(result, tuple), f"compiled unexpectedly: {result.tree}"
    assert result, "a failed compilation must report at least one diagnostic"
    assert all(d.severity is Severity.ERROR for d in result)
    return result


def run(source: str, ctx: Mapping[str, Any] = CTX, payload: Mapping[str, Any] = PAYLOAD) -> Any:
    return ok(source).evaluate(ctx, payload, ACTIVE)


# ---------------------------------------------------------------------------
# Evaluation


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("event.attempt == ctx.i - 1", True),
        ("event.amount <= ctx.i", False),
        ("ctx.i + 1", 4),
        ("1 + ctx.i", 4),
        ("ctx.i - 10", -7),
        ("ctx.j / 2", 2.0),
        ("ctx.j // 3", 1),
        ("ctx.j % 3", 1),
        ("ctx.i ** 2", 9),
        ("event.k * 2", 10),
        ("(ctx.i + 1) * (ctx.j - 1)", 12),
        ("2 ** 10", 1024),
        ("-ctx.i", -3),
        ("+ctx.x", 2.5),
        ("-(-3)", 3),
        ("abs(-ctx.i)", 3),
        ("abs(ctx.x - 10)", 7.5),
        ("min(ctx.i, ctx.j, 1)", 1),
        ("max(ctx.i, ctx.x)", 3),
        ("len(ctx.s)", 3),
        ("len('é')", 1),
        ("ctx.s + '!'", "hey!"),
        ("1 < ctx.i < 5", True),
        ("1 < ctx.i > 5", False),
        ("ctx.i == 3 == ctx.j - 1", True),
        ("ctx.role in ['user', 'support']", True),
        ("ctx.role not in ['user']", False),
        ("event.amount in [ctx.i, 7]", True),
        ("ctx.i in (1, 2, 3)", True),
        ("ctx.i + 0 in [3]", True),
        ("ctx.i + 0 not in [3]", False),
        ("event.requester in ['support']", True),
        ("event.amount not in [7]", False),
        ("ctx.i not in [ctx.j]", True),
        ("ctx.n in [None, 1]", True),
        ("ctx.n is None", True),
        ("ctx.n is not None", False),
        ("event.maybe is None", True),
        ("event.maybe is not None", False),
        ("(ctx.n if ctx.b else 1) is None", True),
        ("(ctx.n if ctx.b else 1) is not None", False),
        ("active('done')", True),
        ("not active('done')", False),
        ("active('other')", False),
        ("not active('other')", True),
        ("ctx.b and ctx.i > 2", True),
        ("ctx.paid or ctx.b", True),
        ("ctx.paid and ctx.b and ctx.b", False),
        ("ctx.b and ctx.b and ctx.b", True),
        ("ctx.paid or ctx.paid or ctx.b", True),
        ("ctx.paid or ctx.paid or ctx.paid", False),
        ("ctx.b and ctx.b and ctx.b and ctx.paid", False),
        ("ctx.b and ctx.b and ctx.b and ctx.b", True),
        ("ctx.paid or ctx.paid or ctx.paid or ctx.b", True),
        ("ctx.paid or ctx.paid or ctx.paid or ctx.paid", False),
        ("not ctx.paid", True),
        ("'yes' if ctx.b else 'no'", "yes"),
        ("'yes' if ctx.paid else 'no'", "no"),
        ("ctx.ref == 'x'", False),
        ("ctx.role == event.requester", False),
        ("ctx.level == 2", True),
        ("true", True),
        ("false", False),
        ("null", None),
        ("None", None),
        ("1.5", 1.5),
        ("'it''s'", "its"),
    ],
)
def test_evaluates(source: str, value: object) -> None:
    result = run(source)
    assert result == value
    assert type(result) is type(value)


LEAVES: list[tuple[str, object]] = [
    ("ctx.i", 3),
    ("event.k", 5),
    ("3", 3),
    ("ctx.x", 2.5),
    ("(ctx.j - 1)", 3),
    ("min(event.k, 9)", 5),
]
COMPARE_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@pytest.mark.parametrize("op", sorted(COMPARE_OPS))
@pytest.mark.parametrize("left", LEAVES, ids=lambda leaf: leaf[0])
@pytest.mark.parametrize("right", LEAVES, ids=lambda leaf: leaf[0])
def test_every_comparison_shape(
    op: str, left: tuple[str, object], right: tuple[str, object]
) -> None:
    """Each specialised comparison closure (ref/literal/computed on either side) agrees."""
    assert run(f"{left[0]} {op} {right[0]}") == COMPARE_OPS[op](left[1], right[1])


ARITH_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
}


@pytest.mark.parametrize("op", sorted(ARITH_OPS))
@pytest.mark.parametrize("left", LEAVES, ids=lambda leaf: leaf[0])
@pytest.mark.parametrize("right", LEAVES, ids=lambda leaf: leaf[0])
def test_every_arithmetic_shape(
    op: str, left: tuple[str, object], right: tuple[str, object]
) -> None:
    expected = ARITH_OPS[op](left[1], right[1])
    result = run(f"{left[0]} {op} {right[0]}")
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("ctx.zero != 0 and ctx.i / ctx.zero > 1", False),
        ("ctx.zero == 0 or ctx.i / ctx.zero > 1", True),
        ("ctx.paid and ctx.b and ctx.i / ctx.zero > 1", False),
        ("ctx.paid or ctx.b or ctx.i / ctx.zero > 1", True),
        ("ctx.b and ctx.b and ctx.paid and ctx.i / ctx.zero > 1", False),
        ("ctx.paid or ctx.paid or ctx.b or ctx.i / ctx.zero > 1", True),
        ("1 if ctx.b else ctx.i // ctx.zero", 1),
        ("ctx.i // ctx.zero if ctx.paid else 2", 2),
        ("ctx.i > 5 > ctx.i / ctx.zero", False),
    ],
)
def test_short_circuit(source: str, value: object) -> None:
    assert run(source) == value


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("ctx.i / ctx.zero > 1", ZeroDivisionError),
        ("ctx.i % ctx.zero", ZeroDivisionError),
        ("ctx.x // (ctx.x - ctx.x)", ZeroDivisionError),
        ("ctx.i in [1, ctx.i // ctx.zero]", ZeroDivisionError),
        ("ctx.x ** 64", OverflowError),
    ],
)
def test_arithmetic_errors_propagate(source: str, error: type[ArithmeticError]) -> None:
    """Division by zero and float overflow raise; the engine classifies them."""
    with pytest.raises(error):
        run(source, ctx={**CTX, "x": 1e10})


# ---------------------------------------------------------------------------
# Types


@pytest.mark.parametrize(
    ("source", "type_"),
    [
        ("1", INTEGER),
        ("-1", INTEGER),
        ("1.5", NUMBER),
        ("'a'", STRING),
        ("true", BOOLEAN),
        ("null", NULL),
        ("ctx.i + 1", INTEGER),
        ("ctx.i / 1", NUMBER),
        ("ctx.i // 2", INTEGER),
        ("ctx.x // 2", NUMBER),
        ("ctx.i ** 2", INTEGER),
        ("ctx.level + 1", INTEGER),
        ("ctx.s + 'a'", STRING),
        ("ctx.role + 'a'", STRING),
        ("ctx.role", ROLE),
        ("event.requester", ROLE),
        ("len(ctx.s)", INTEGER),
        ("abs(ctx.x)", NUMBER),
        ("abs(ctx.i)", INTEGER),
        ("min(ctx.i, 2)", INTEGER),
        ("max(ctx.i, 2.0)", NUMBER),
        ("-ctx.i", INTEGER),
        ("-ctx.level", INTEGER),
        ("ctx.n", NULLABLE_INT),
        ("ctx.i < 1 < 2", BOOLEAN),
        ("active('done')", BOOLEAN),
        ("ctx.i if ctx.b else ctx.x", NUMBER),
        ("ctx.i if ctx.b else None", NULLABLE_INT),
        ("None if ctx.b else ctx.s", NULLABLE_STR),
        ("ctx.n if ctx.b else 1", NULLABLE_INT),
        ("ctx.role if ctx.b else 'user'", ROLE),
        ("'support' if ctx.b else ctx.role", ROLE),
        (
            "ctx.role if ctx.b else ctx.color",
            ValueType(BaseType.STRING, enum=("user", "support", "red", "green")),
        ),
        ("ctx.role if ctx.b else 'other'", STRING),
        ("'a' if ctx.b else 'b'", STRING),
    ],
)
def test_infers_types(source: str, type_: ValueType) -> None:
    assert ok(source).type == type_


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("ctx.i", INTEGER),
        ("ctx.i", NUMBER),
        ("ctx.x", NUMBER),
        ("null", NULLABLE_INT),
        ("ctx.n", NULLABLE_INT),
        ("ctx.i", NULLABLE_INT),
        ("ctx.role", ROLE),
        ("ctx.role", STRING),
        ("event.requester", ROLE),
        ("'user'", ROLE),
        ("'user' if ctx.b else 'support'", ROLE),
        ("ctx.role if ctx.b else 'user'", ROLE),
        ("None if ctx.b else 'user'", ValueType(BaseType.STRING, nullable=True, enum=("user",))),
        ("2", LEVEL),
        ("ctx.level", INTEGER),
        ("ctx.i > 1", BOOLEAN),
        (0, INTEGER),
        (0, NUMBER),
        (1.5, NUMBER),
        (True, BOOLEAN),
        (None, NULLABLE_STR),
        ("ctx.s", STRING),
    ],
)
def test_assignable(source: str | int | float | bool | None, expected: ValueType) -> None:
    assert ok(source, expected=expected)


@pytest.mark.parametrize(
    ("source", "expected", "message"),
    [
        ("ctx.i", BOOLEAN, "guard 'g': expected boolean, got integer"),
        ("ctx.x", INTEGER, "guard 'g': expected integer, got number"),
        ("ctx.i / 2", INTEGER, "expected integer, got number"),
        ("null", INTEGER, "expected integer, got null"),
        ("ctx.ref", STRING, "expected string, got string or null"),
        ("ctx.n", INTEGER, "expected integer, got integer or null"),
        ("ctx.s", ROLE, "expected one of 'user', 'support', got string"),
        ("ctx.color", ROLE, "expected one of 'user', 'support', got one of 'red', 'green'"),
        ("'bogus'", ROLE, "'bogus' is not one of 'user', 'support'"),
        ("'user' if ctx.b else 'x'", ROLE, "'x' is not one of 'user', 'support'"),
        ("ctx.role", INTEGER, "expected integer, got one of 'user', 'support'"),
        ("5", LEVEL, "5 is not one of 1, 2, 3"),
        ("true", LEVEL, "expected one of 1, 2, 3, got boolean"),
        ("ctx.b", STRING, "expected string, got boolean"),
        (True, INTEGER, "expected integer, got boolean"),
        (1.5, INTEGER, "expected integer, got number"),
        (None, INTEGER, "expected integer, got null"),
        ("ctx.s + 'x'", ROLE, "guard 'g': expected one of 'user', 'support', got string"),
    ],
)
def test_not_assignable(
    source: str | int | float | bool | None, expected: ValueType, message: str
) -> None:
    (diagnostic,) = errors(source, expected=expected, what="guard 'g'")
    assert diagnostic.slug == "expression-type"
    assert message in diagnostic.message
    assert diagnostic.message.startswith("guard 'g': ")
    assert (diagnostic.span.line, diagnostic.span.column) == (LINE, COLUMN)


def test_yaml_literals_are_literals() -> None:
    for value, type_ in [(0, INTEGER), (2.5, NUMBER), (True, BOOLEAN), (None, NULL)]:
        expression = ok(value)
        assert expression.type == type_
        assert expression.tree == Literal(value, type_)
        assert expression.evaluate({}, {}, frozenset()) == value
    assert ok(True).source == "true"
    assert ok(None).source == "null"
    assert ok("ctx.i").source == "ctx.i"


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_yaml_literal_is_refused(value: float) -> None:
    (diagnostic,) = errors(value)
    assert diagnostic.slug == "expression-unsafe"
    assert "not a finite number" in diagnostic.message


# ---------------------------------------------------------------------------
# Diagnostics: slug, column (0-based inside the source) and message


@pytest.mark.parametrize(
    ("source", "slug", "offset", "message"),
    [
        # syntax
        ("a +", "expression-syntax", 3, "invalid syntax"),
        ("ctx.i ==", "expression-syntax", 8, "invalid syntax"),
        ("(ctx.i", "expression-syntax", 0, "'(' was never closed"),
        ("1 2", "expression-syntax", 2, "invalid syntax"),
        ("ctx.i = 1", "expression-syntax", 6, "invalid syntax"),
        ("ctx.i if ctx.b", "expression-syntax", 0, "expected 'else'"),
        ("", "expression-syntax", 0, "invalid syntax"),
        ("x := 1", "expression-syntax", 2, "invalid syntax"),
        ("*ctx.i", "expression-syntax", 0, "invalid syntax"),
        # unsafe constructs
        ("__import__('os')", "expression-unsafe", 0, "calls are limited to active(), len()"),
        ("ctx.i + foo", "expression-unsafe", 8, "name 'foo' is not allowed"),
        ("ctx", "expression-unsafe", 0, "'ctx' is only allowed as ctx.<field>"),
        ("event", "expression-unsafe", 0, "'event' is only allowed as event.<field>"),
        ("len", "expression-unsafe", 0, "'len' can only be called"),
        ("lambda: 1", "expression-unsafe", 0, "lambda is not allowed"),
        ("[x for x in y]", "expression-unsafe", 0, "comprehensions are not allowed"),
        ("ctx.i in {x for x in y}", "expression-unsafe", 9, "'in' needs a list display"),
        ("(x for x in y)", "expression-unsafe", 0, "comprehensions are not allowed"),
        ("{1: 2}", "expression-unsafe", 0, "dict displays are not allowed"),
        ("{1, 2}", "expression-unsafe", 0, "set displays are not allowed"),
        ("(1, 2)", "expression-unsafe", 0, "tuples are only allowed on the right of 'in'"),
        ("(1, 2)", "expression-unsafe", 0, "tuples are only allowed"),
        ("event['x']", "expression-unsafe", 0, "subscripts are only allowed on a list or a"),
        ("f'{ctx.s}'", "expression-unsafe", 0, "f-strings are not allowed"),
        ("(y := 1)", "expression-unsafe", 1, "assignment expressions (:=) are not allowed"),
        ("ctx.i in [*ctx.j]", "expression-unsafe", 10, "starred expressions are not allowed"),
        ("max(*ctx.j)", "expression-unsafe", 4, "starred expressions are not allowed"),
        ("(yield)", "expression-unsafe", 1, "yield is not allowed"),
        ("await ctx.i", "expression-unsafe", 0, "await is not allowed"),
        ("ctx.i | 1", "expression-unsafe", 0, "operator '|' is not allowed"),
        ("ctx.i << 1", "expression-unsafe", 0, "operator '<<' is not allowed"),
        ("~ctx.i", "expression-unsafe", 0, "operator '~' is not allowed"),
        ("2 ** ctx.i", "expression-unsafe", 5, "huge exponents"),
        ("2 ** 1000000000", "expression-unsafe", 5, "huge exponents"),
        ("9 ** 9 ** 9", "expression-unsafe", 5, "huge exponents"),
        ("2 ** 65", "expression-unsafe", 5, "huge exponents"),
        ("2 ** -1", "expression-unsafe", 5, "huge exponents"),
        ("2 ** 2.5", "expression-unsafe", 5, "huge exponents"),
        ("2 ** True", "expression-unsafe", 5, "huge exponents"),
        ("(ctx.i ** 8) ** 9", "expression-unsafe", 0, "nested powers"),
        ("ctx.i is 1", "expression-unsafe", 0, "'is' is only allowed as 'is None'"),
        ("ctx.s in 'abc'", "expression-unsafe", 9, "'in' needs a list display"),
        ("ctx.s not in ctx.i", "expression-unsafe", 13, "'not in' needs a list display"),
        ("ctx.i < ctx.j in [1]", "expression-unsafe", 0, "cannot be chained"),
        ("active(ctx.s)", "expression-unsafe", 0, "active() takes one string literal"),
        ("active('a', 'b')", "expression-unsafe", 0, "active() takes one string literal"),
        ("active()", "expression-unsafe", 0, "active() takes one string literal"),
        ("len(obj=ctx.s)", "expression-unsafe", 8, "keyword arguments are not allowed"),
        ("b'x'", "expression-unsafe", 0, "bytes literals are not allowed"),
        ("1j", "expression-unsafe", 0, "complex literals are not allowed"),
        ("...", "expression-unsafe", 0, "ellipsis literals are not allowed"),
        ("1e999", "expression-unsafe", 0, "1e999 is not a finite number"),
        ("event.__class__", "expression-unsafe", 0, "attribute access '__class__' is not allowed"),
        ("ctx.x.__class__", "expression-unsafe", 0, "attribute access '__class__' is not allowed"),
        ("ctx.i.real", "expression-unsafe", 0, "attribute access 'real' is not allowed"),
        ("'abc'.upper()", "expression-unsafe", 0, "calls are limited"),
        ("ctx.s[0]", "expression-unsafe", 0, "subscripts are only allowed on a list or a"),
        ("1 + " * 600 + "1", "expression-unsafe", 0, "too long"),
        ("-" * 60 + "ctx.i", "expression-unsafe", 0, "nested more than 50 levels"),
        # types
        ("ctx.payed", "expression-type", 0, "unknown context field 'payed'"),
        ("event.amout", "expression-type", 0, "event START_PAY has no field 'amout'"),
        ("ctx.i == 'all'", "expression-type", 0, "can never be true"),
        ("event.amount == 'all'", "expression-type", 0, "comparing integer with string"),
        ("ctx.b == 1", "expression-type", 0, "can never be true"),
        ("ctx.role == 'bogus'", "expression-type", 0, "'bogus' is not one of 'user', 'support'"),
        ("'bogus' != event.requester", "expression-type", 0, "the values of event.requester"),
        ("ctx.role == ctx.color", "expression-type", 0, "can never be true"),
        ("ctx.level == 7", "expression-type", 0, "7 is not one of 1, 2, 3"),
        ("ctx.role in ['user', 'bogus']", "expression-type", 21, "'bogus' is not one of"),
        ("ctx.i in [1, 'a']", "expression-type", 13, "can never be true"),
        ("ctx.i in [None]", "expression-type", 10, "ctx.i is never null"),
        ("ctx.ref == None", "expression-type", 0, "use 'is None'"),
        ("None != ctx.ref", "expression-type", 0, "use 'is None' or 'is not None' instead of '!='"),
        ("ctx.i is None", "expression-type", 0, "'ctx.i is None' can never be true"),
        ("ctx.i is not None", "expression-type", 0, "can never be false"),
        ("ctx.b < ctx.paid", "expression-type", 0, "booleans cannot be ordered with '<'"),
        ("ctx.ref < 'a'", "expression-type", 0, "'<' cannot order a value that may be null"),
        ("1 < ctx.n", "expression-type", 0, "ctx.n is integer or null"),
        ("ctx.i < 'a'", "expression-type", 0, "'<' cannot compare integer with string"),
        ("ctx.i and ctx.b", "expression-type", 0, "'and' needs a boolean, but ctx.i is integer"),
        ("ctx.b or ctx.s", "expression-type", 9, "'or' needs a boolean, but ctx.s is string"),
        ("not ctx.i", "expression-type", 4, "'not' needs a boolean"),
        ("ctx.b and ctx.ref is None and ctx.n", "expression-type", 30, "integer or null"),
        ("1 if ctx.i else 2", "expression-type", 5, "a conditional expression needs a boolean"),
        ("1 if ctx.b else 'a'", "expression-type", 0, "incompatible types: integer and string"),
        ("ctx.i + 's'", "expression-type", 0, "'+' needs two numbers or two strings"),
        ("ctx.s * 2", "expression-type", 0, "'*' needs numbers, got string and integer"),
        ("ctx.b + true", "expression-type", 0, "got boolean and boolean"),
        ("ctx.n + 1", "expression-type", 0, "'+' needs numbers, but ctx.n may be null"),
        ("-ctx.s", "expression-type", 0, "unary '-' needs a number, got string"),
        ("-ctx.n", "expression-type", 0, "got integer or null"),
        (
            "len(ctx.i)",
            "expression-type",
            4,
            "len() needs a string or a list, but ctx.i is integer",
        ),
        ("len(ctx.ref)", "expression-type", 4, "string or null"),
        ("len(ctx.s, ctx.s)", "expression-type", 0, "len() takes exactly one argument (2 given)"),
        ("abs(ctx.s)", "expression-type", 4, "abs() needs numbers"),
        ("min(ctx.i)", "expression-type", 0, "min() needs at least two arguments"),
        ("max(ctx.i, ctx.s)", "expression-type", 11, "max() needs numbers, but ctx.s is string"),
        # a state reference that does not resolve: the resolver's diagnostic, as is
        ("active('nowhere')", "unknown-state", 7, "unknown state 'nowhere'"),
    ],
)
def test_diagnostic(source: str, slug: str, offset: int, message: str) -> None:
    diagnostics = errors(source)
    assert [d.slug for d in diagnostics] == [slug], [d.message for d in diagnostics]
    (diagnostic,) = diagnostics
    assert (diagnostic.span.line, diagnostic.span.column) == (LINE, COLUMN + offset)
    assert diagnostic.span.end_column > diagnostic.span.column
    assert message in diagnostic.message


def test_messages_name_the_role() -> None:
    (diagnostic,) = errors("ctx.payed", what="guard 'paid_enough'")
    assert diagnostic.message == "guard 'paid_enough': unknown context field 'payed'"


def test_unknown_field_suggestions() -> None:
    (diagnostic,) = errors("ctx.payed")
    assert diagnostic.notes == ("did you mean 'paid'?",)
    (diagnostic,) = errors("event.amout")
    assert diagnostic.notes == ("did you mean 'amount'?",)
    (diagnostic,) = errors("event.zzzzzz")
    assert diagnostic.notes == ("payload fields: amount, attempt, requester, maybe, k, t, f",)
    (diagnostic,) = errors("ctx.zzzzzz")
    assert diagnostic.notes == ()


def test_bare_names_get_hints() -> None:
    (diagnostic,) = errors("paid")
    assert diagnostic.notes == ("did you mean ctx.paid?",)
    (diagnostic,) = errors("amount > 1")
    assert diagnostic.notes == ("did you mean event.amount?",)
    (diagnostic,) = errors("support")
    assert diagnostic.notes == (
        "a string literal needs quotes inside the expression: \"'support'\"",
    )


def test_event_fields_need_an_event() -> None:
    (diagnostic,) = errors("ctx.i > 0 and event.amount > 1", scope=NO_EVENT)
    assert diagnostic.slug == "expression-type"
    assert diagnostic.span.column == COLUMN + 14
    assert diagnostic.message == (
        "expression: event.amount is not available here: entry actions run without a typed event"
    )
    assert ok("ctx.i > 0", scope=NO_EVENT).evaluate(CTX, {}, frozenset()) is True


def test_event_without_name() -> None:
    scope = ExpressionScope(CONTEXT, TypedEvent({}), resolve)
    (diagnostic,) = errors("event.amount", scope=scope)
    assert "the event has no field 'amount'" in diagnostic.message
    assert diagnostic.notes == ("payload fields: none",)


def test_a_deferred_event_leaves_payload_reads_unchecked() -> None:
    """Where the event is only known at the use site, only the rest of the expression is checked."""
    (diagnostic,) = errors("event.amount > 1 and ctx.nope", scope=DEFERRED)
    assert diagnostic.message == "expression: unknown context field 'nope'"
    assert diagnostic.span.column == COLUMN + 21
    assert compile_("event.amount > 1", scope=DEFERRED) == ()


def test_every_problem_is_reported() -> None:
    diagnostics = errors("ctx.payed and event.amout or ctx.i and foo")
    assert [(d.slug, d.span.column - COLUMN) for d in diagnostics] == [
        ("expression-type", 0),
        ("expression-type", 14),
        ("expression-type", 29),
        ("expression-unsafe", 39),
    ]


def test_active_resolves_with_the_argument_span() -> None:
    seen: list[tuple[str, SourceSpan]] = []

    def recording(ref: str, span: SourceSpan) -> int | Diagnostic:
        seen.append((ref, span))
        return resolve(ref, span)

    scope = ExpressionScope(CONTEXT, TypedEvent(EVENT), recording)
    expression = ok("ctx.b and active('done')", scope=scope)
    assert seen == [("done", SourceSpan("chart.yaml", LINE, COLUMN + 17, LINE, COLUMN + 23))]
    assert expression.active_states() == frozenset({7})


# ---------------------------------------------------------------------------
# Positions


def test_quoted_scalar_columns_skip_the_quote() -> None:
    source = "ctx.i > 0 and ctx.payed"
    span = SourceSpan("chart.yaml", 3, 9, 3, 9 + len(source) + 2)  # "ctx.i > 0 and ctx.payed"
    result = compile_expression(source, span, SCOPE)
    assert isinstance(result, tuple)
    assert (result[0].span.line, result[0].span.column) == (3, 9 + 1 + 14)
    assert result[0].span.end_column == 9 + 1 + 23


def test_leading_whitespace_is_counted() -> None:
    source = "  ctx.payed"
    result = compile_expression(source, span_for(source), SCOPE)
    assert isinstance(result, tuple)
    assert result[0].span.column == COLUMN + 2


def test_columns_count_characters_not_bytes() -> None:
    (diagnostic,) = errors("'éé' + ctx.payed")
    assert diagnostic.span.column == COLUMN + 7
    (diagnostic,) = errors("'é' == 'é' and ctx.s + $")
    assert diagnostic.slug == "expression-syntax"
    assert diagnostic.span.column == COLUMN + 23


def test_multiline_scalar_points_at_its_start() -> None:
    span = SourceSpan("chart.yaml", 4, 5, 6, 12)
    for source in ("ctx.i > 0 and ctx.payed", "ctx.b and\n  ctx.payed", "ctx.b and\nctx.b +"):
        result = compile_expression(source, span, SCOPE)
        assert isinstance(result, tuple)
        assert all(d.span == span for d in result), result


# ---------------------------------------------------------------------------
# Attacks: refused at compile time, never crash


ATTACKS = [
    "__import__('os')",
    "__import__('os').system('true')",
    "event.__class__",
    "().__class__.__bases__",
    "().__class__.__bases__[0].__subclasses__()",
    "ctx.x.__class__",
    "lambda: 1",
    "(lambda: 1)()",
    "[x for x in y]",
    "{1: 2}",
    "open('f')",
    "2 ** 1000000000",
    "9 ** 9 ** 9",
    "(9 ** 64) ** 64",
    "((2 ** 8) ** 8) ** 8",
    "event['x']",
    "f'{ctx.s}'",
    "f'{ctx.s!r:>{10**9}}'",
    "(x := 1)",
    "x := 1",
    "[*ctx.s]",
    "min(*ctx.s)",
    "getattr(ctx, 'x')",
    "globals()",
    "ctx.__dict__",
    "ctx.s.format(ctx)",
    "'%s' % ctx.s",
    "'a' * 10 ** 9",
    "'a' * 1000000000",
    "len('a' * 10)",
    "active('x' * 2)",
    "(" * 100_000 + "1" + ")" * 100_000,
    "(" * 300 + "1" + ")" * 300,
    "-" * 1999 + "1",
    "not " * 400 + "ctx.b",
    "[" * 1000 + "]" * 1000,
    "ctx.i in [1" + ", 1" * 900 + "]",
    "1" * 3000,
    "\x00",
    "ctx.i\x00",
]


@pytest.mark.parametrize("source", ATTACKS, ids=lambda s: s[:40])
def test_attacks_are_refused(source: str) -> None:
    diagnostics = errors(source)
    assert {d.slug for d in diagnostics} <= {
        "expression-unsafe",
        "expression-syntax",
        "expression-type",
    }


def test_a_long_list_is_only_refused_for_its_length() -> None:
    assert ok("ctx.i in [1" + ", 1" * 600 + "]").evaluate(CTX, PAYLOAD, ACTIVE) is False


def test_modules_never_evaluate_text() -> None:
    """No eval/exec/compile/getattr in the expression modules; imports stay inside the compiler."""
    allowed_imports = {
        "statekit.compiler.delay_literals",
        "statekit.compiler.diagnostics",
        "statekit.compiler.record_values",
        "statekit.compiler.rules",
        "statekit.compiler.value_types",
    }
    package = Path(expressions.__file__ or "").parent
    modules = sorted(package.glob("*.py"))
    assert len(modules) > 1
    for module in modules:
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {"eval", "exec", "compile", "getattr", "__import__"}
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("statekit"):
                inside = (node.module or "").startswith("statekit.compiler.expressions.")
                assert inside or node.module in allowed_imports
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("statekit") for alias in node.names)


# ---------------------------------------------------------------------------
# The tree and its JSON form


def test_tree_shape_and_json() -> None:
    expression = ok("ctx.i + 1")
    assert expression.tree == BinOp("+", ContextRef("i", INTEGER), Literal(1, INTEGER), INTEGER)
    assert expression.to_json() == {
        "source": "ctx.i + 1",
        "type": {"type": "integer"},
        "tree": {
            "kind": "binop",
            "op": "+",
            "left": {"kind": "ctx", "field": "i", "type": {"type": "integer"}},
            "right": {"kind": "literal", "value": 1, "type": {"type": "integer"}},
            "type": {"type": "integer"},
        },
    }
    compare = ok("1 < event.k <= 3").tree
    assert compare == Compare(
        Literal(1, INTEGER), ("<", "<="), (EventRef("k", INTEGER), Literal(3, INTEGER))
    )
    assert ok("active('a')").tree == Active(1, "a")


def test_json_is_deterministic_and_serialisable() -> None:
    source = (
        "(ctx.role in ['user', 'support'] or not active('done')) and "
        "(ctx.n is None) and -ctx.x < abs(event.k) and len(ctx.s + 'x') == min(1, 2.0, ctx.i) "
        "and (ctx.i ** 2 if ctx.b else ctx.j // 2) != 0"
    )
    first, second = ok(source), ok(source)
    assert first == second  # the evaluator does not take part in equality
    assert hash(first) == hash(second)
    text = json.dumps(first.to_json(), sort_keys=True, allow_nan=False)
    assert text == json.dumps(second.to_json(), sort_keys=True, allow_nan=False)
    kinds = {node["kind"] for node in _json_nodes(first.to_json()["tree"])}
    assert kinds == {
        "boolop", "in", "ctx", "literal", "not", "active", "is_none", "compare",
        "unaryop", "call", "event", "binop", "if",
    }  # fmt: skip


def _json_nodes(value: object) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if "kind" in value:
            found.append(value)
        for child in value.values():
            found.extend(_json_nodes(child))
    elif isinstance(value, list):
        for child in value:
            found.extend(_json_nodes(child))
    return found


@pytest.mark.parametrize(
    ("source", "states", "reads_event", "reads_context"),
    [
        ("active('done') and event.amount > ctx.i", {7}, True, True),
        ("active('a') or active('b') or not active('a')", {1, 2}, False, False),
        ("1 + 2", set(), False, False),
        ("event.k if true else 0", set(), True, False),
        ("len(ctx.s)", set(), False, True),
    ],
)
def test_static_analysis_helpers(
    source: str, states: set[int], reads_event: bool, reads_context: bool
) -> None:
    expression = ok(source)
    assert expression.active_states() == frozenset(states)
    assert expression.reads_event() is reads_event
    assert expression.reads_context() is reads_context


# ---------------------------------------------------------------------------
# Property: compiled closures agree with a reference evaluation


@dataclass(frozen=True)
class Raised:
    """The reference outcome "evaluation raises this arithmetic error"."""

    kind: type[BaseException]


@dataclass(frozen=True)
class Env:
    ctx: dict[str, Any]
    event: dict[str, Any]
    active: frozenset[int]


Gen = tuple[str, object]  # (source, reference value or Raised)
Draw = Callable[[st.SearchStrategy[Any]], Any]

SMALL_TEXT = st.text(alphabet="ab'\"\\ é\n", max_size=4)
ENVS = st.builds(
    Env,
    ctx=st.fixed_dictionaries(
        {
            "i": st.integers(-20, 20),
            "j": st.integers(-20, 20),
            "zero": st.sampled_from([0, 1]),
            "x": st.floats(-100, 100),
            "s": SMALL_TEXT,
            "b": st.booleans(),
            "paid": st.booleans(),
            "n": st.none() | st.integers(-3, 3),
            "ref": st.none() | SMALL_TEXT,
            "role": st.sampled_from(ROLE.enum or ()),
            "color": st.sampled_from(COLOR.enum or ()),
            "level": st.sampled_from(LEVEL.enum or ()),
        }
    ),
    event=st.fixed_dictionaries(
        {
            "amount": st.integers(0, 10),
            "attempt": st.integers(0, 10),
            "requester": st.sampled_from(ROLE.enum or ()),
            "maybe": st.none() | SMALL_TEXT,
            "k": st.integers(-20, 20),
            "t": SMALL_TEXT,
            "f": st.booleans(),
        }
    ),
    active=st.frozensets(st.sampled_from([1, 2, 3, 7, 8])),
)


def _apply(fn: Callable[..., object], *args: object) -> object:
    """Apply an operation to already evaluated operands, left to right, like Python."""
    for arg in args:
        if isinstance(arg, Raised):
            return arg
    try:
        return fn(*args)
    except ArithmeticError as exc:
        return Raised(type(exc))


def _if(test: object, body: object, orelse: object) -> object:
    if isinstance(test, Raised):
        return test
    return body if test else orelse


def _bool_chain(op: str, values: list[object]) -> object:
    result: object = op == "and"
    for value in values:
        if isinstance(value, Raised):
            return value
        result = value
        if bool(value) is (op == "or"):
            return value
    return result


def _compare_chain(values: list[object], ops: list[str]) -> object:
    x = values[0]
    if isinstance(x, Raised):
        return x
    result: object = True
    for op, y in zip(ops, values[1:], strict=True):
        if isinstance(y, Raised):
            return y
        result = COMPARE_OPS[op](x, y)
        if not result:
            return result
        x = y
    return result


def gen_int(draw: Draw, env: Env, depth: int) -> Gen:
    kinds = ["literal", "ctx", "event"]
    if depth > 0:
        kinds += ["arith", "neg", "abs", "minmax", "len", "pow", "if"]
    kind = draw(st.sampled_from(kinds))
    if kind == "literal":
        value = draw(st.integers(0, 50))
        return str(value), value
    if kind == "ctx":
        name = draw(st.sampled_from(["i", "j", "zero"]))
        return f"ctx.{name}", env.ctx[name]
    if kind == "event":
        name = draw(st.sampled_from(["k", "amount"]))
        return f"event.{name}", env.event[name]
    if kind == "arith":
        op = draw(st.sampled_from(["+", "-", "*", "//", "%"]))
        (ls, lv), (rs, rv) = gen_int(draw, env, depth - 1), gen_int(draw, env, depth - 1)
        return f"({ls} {op} {rs})", _apply(ARITH_OPS[op], lv, rv)
    if kind == "neg":
        xs, xv = gen_int(draw, env, depth - 1)
        return f"(-({xs}))", _apply(operator.neg, xv)
    if kind == "abs":
        xs, xv = gen_int(draw, env, depth - 1)
        return f"abs({xs})", _apply(abs, xv)
    if kind == "minmax":
        return _minmax(draw, env, depth, gen_int)
    if kind == "len":
        xs, xv = gen_str(draw, env, depth - 1)
        return f"len({xs})", _apply(len, xv)
    if kind == "pow":
        return _pow(draw, env, depth, gen_int)
    return _conditional(draw, env, depth, gen_int)


def gen_num(draw: Draw, env: Env, depth: int) -> Gen:
    kinds = ["literal", "ctx", "int"]
    if depth > 0:
        kinds += ["arith", "neg", "abs", "minmax", "pow", "if"]
    kind = draw(st.sampled_from(kinds))
    if kind == "literal":
        value = draw(st.floats(0, 100))
        return repr(value), value
    if kind == "ctx":
        return "ctx.x", env.ctx["x"]
    if kind == "int":
        return gen_int(draw, env, depth)
    if kind == "arith":
        op = draw(st.sampled_from(sorted(ARITH_OPS)))
        (ls, lv), (rs, rv) = gen_num(draw, env, depth - 1), gen_num(draw, env, depth - 1)
        return f"({ls} {op} {rs})", _apply(ARITH_OPS[op], lv, rv)
    if kind == "neg":
        xs, xv = gen_num(draw, env, depth - 1)
        return f"(-{xs})", _apply(operator.neg, xv)
    if kind == "abs":
        xs, xv = gen_num(draw, env, depth - 1)
        return f"abs({xs})", _apply(abs, xv)
    if kind == "minmax":
        return _minmax(draw, env, depth, gen_num)
    if kind == "pow":
        return _pow(draw, env, depth, gen_num)
    return _conditional(draw, env, depth, gen_num)


def gen_str(draw: Draw, env: Env, depth: int) -> Gen:
    kinds = ["literal", "ctx", "event"]
    if depth > 0:
        kinds += ["concat", "if"]
    kind = draw(st.sampled_from(kinds))
    if kind == "literal":
        value = draw(SMALL_TEXT)
        return repr(value), value
    if kind == "ctx":
        return "ctx.s", env.ctx["s"]
    if kind == "event":
        return "event.t", env.event["t"]
    if kind == "concat":
        (ls, lv), (rs, rv) = gen_str(draw, env, depth - 1), gen_str(draw, env, depth - 1)
        return f"({ls} + {rs})", _apply(operator.add, lv, rv)
    return _conditional(draw, env, depth, gen_str)


def gen_bool(draw: Draw, env: Env, depth: int) -> Gen:
    kinds = ["literal", "ctx", "event", "active", "is_none"]
    if depth > 0:
        kinds += ["not", "boolop", "compare", "compare_str", "eq_bool", "in", "nullable_eq", "if"]
    kind = draw(st.sampled_from(kinds))
    if kind == "literal":
        text = draw(st.sampled_from(["True", "False", "true", "false"]))
        return text, text.lower() == "true"
    if kind == "ctx":
        name = draw(st.sampled_from(["b", "paid"]))
        return f"ctx.{name}", env.ctx[name]
    if kind == "event":
        return "event.f", env.event["f"]
    if kind == "active":
        ref = draw(st.sampled_from(sorted(STATES)))
        return f"active({ref!r})", STATES[ref] in env.active
    if kind == "is_none":
        ref = draw(st.sampled_from(["ctx.n", "ctx.ref", "event.maybe"]))
        value = env.ctx[ref[4:]] if ref.startswith("ctx.") else env.event[ref[6:]]
        if draw(st.booleans()):
            return f"({ref} is not None)", value is not None
        return f"({ref} is None)", value is None
    if kind == "not":
        xs, xv = gen_bool(draw, env, depth - 1)
        return f"(not {xs})", _apply(operator.not_, xv)
    if kind == "boolop":
        op = draw(st.sampled_from(["and", "or"]))
        parts = [gen_bool(draw, env, depth - 1) for _ in range(draw(st.integers(2, 4)))]
        return f"({f' {op} '.join(s for s, _ in parts)})", _bool_chain(op, [v for _, v in parts])
    if kind in ("compare", "compare_str"):
        gen = gen_num if kind == "compare" else gen_str
        ops = draw(st.lists(st.sampled_from(sorted(COMPARE_OPS)), min_size=1, max_size=3))
        parts = [gen(draw, env, depth - 1) for _ in range(len(ops) + 1)]
        text = parts[0][0] + "".join(
            f" {op} {s}" for op, (s, _) in zip(ops, parts[1:], strict=True)
        )
        return f"({text})", _compare_chain([v for _, v in parts], ops)
    if kind == "eq_bool":
        op = draw(st.sampled_from(["==", "!="]))
        (ls, lv), (rs, rv) = gen_bool(draw, env, depth - 1), gen_bool(draw, env, depth - 1)
        return f"({ls} {op} {rs})", _apply(COMPARE_OPS[op], lv, rv)
    if kind == "in":
        gen = draw(st.sampled_from([gen_int, gen_num, gen_str]))
        item = gen(draw, env, depth - 1)
        options = [gen(draw, env, depth - 1) for _ in range(draw(st.integers(1, 3)))]
        negated = draw(st.booleans())
        keyword = "not in" if negated else "in"
        values = [item[1]] + [v for _, v in options]
        listed = ", ".join(s for s, _ in options)

        def member(x: object, *opts: object) -> bool:
            return (x not in list(opts)) if negated else (x in list(opts))

        return f"({item[0]} {keyword} [{listed}])", _apply(member, *values)
    if kind == "nullable_eq":
        op = draw(st.sampled_from(["==", "!="]))
        if draw(st.booleans()):
            rs, rv = gen_int(draw, env, depth - 1)
            return f"(ctx.n {op} {rs})", _apply(COMPARE_OPS[op], env.ctx["n"], rv)
        rs, rv = gen_str(draw, env, depth - 1)
        return f"(ctx.ref {op} {rs})", _apply(COMPARE_OPS[op], env.ctx["ref"], rv)
    return _conditional(draw, env, depth, gen_bool)


Generator = Callable[[Draw, Env, int], Gen]


def _minmax(draw: Draw, env: Env, depth: int, gen: Generator) -> Gen:
    name = draw(st.sampled_from(["min", "max"]))
    args = [gen(draw, env, depth - 1) for _ in range(draw(st.integers(2, 3)))]
    fn = min if name == "min" else max
    return f"{name}({', '.join(s for s, _ in args)})", _apply(
        lambda *a: fn(a), *(v for _, v in args)
    )


def _pow(draw: Draw, env: Env, depth: int, gen: Generator) -> Gen:
    exponent = draw(st.integers(0, 2))  # nested at most 4 deep: 2**4 <= MAX_EXPONENT
    xs, xv = gen(draw, env, depth - 1)
    return f"({xs} ** {exponent})", _apply(lambda b: b**exponent, xv)


def _conditional(draw: Draw, env: Env, depth: int, gen: Generator) -> Gen:
    ts, tv = gen_bool(draw, env, depth - 1)
    (bs, bv), (os_, ov) = gen(draw, env, depth - 1), gen(draw, env, depth - 1)
    return f"({bs} if {ts} else {os_})", _if(tv, bv, ov)


@st.composite
def cases(draw: Draw) -> tuple[Env, str, str, object]:
    env = draw(ENVS)
    kind = draw(st.sampled_from(["int", "num", "str", "bool"]))
    gen = {"int": gen_int, "num": gen_num, "str": gen_str, "bool": gen_bool}[kind]
    source, value = gen(draw, env, draw(st.integers(0, 4)))
    return env, kind, source, value


def _same(actual: object, expected: object) -> bool:
    if isinstance(actual, float) and isinstance(expected, float):
        return (math.isnan(actual) and math.isnan(expected)) or actual == expected
    return type(actual) is type(expected) and actual == expected


EXPECTED_BASES = {
    "int": {BaseType.INTEGER},
    "num": {BaseType.INTEGER, BaseType.NUMBER},
    "str": {BaseType.STRING},
    "bool": {BaseType.BOOLEAN},
}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_closures_agree_with_reference(case: tuple[Env, str, str, object]) -> None:
    env, kind, source, expected = case
    assume(len(source) <= MAX_SOURCE_LENGTH)
    expression = ok(source)
    assert expression.type.base in EXPECTED_BASES[kind]
    if isinstance(expected, Raised):
        with pytest.raises(expected.kind):
            expression.evaluate(env.ctx, env.event, env.active)
        return
    actual = expression.evaluate(env.ctx, env.event, env.active)
    assert _same(actual, expected), (source, actual, expected)
    if not (isinstance(actual, float) and not math.isfinite(actual)):
        assert expression.type.accepts(actual), (source, actual, expression.type)


TOKENS = [
    "ctx.i", "ctx.x", "ctx.s", "ctx.b", "ctx.n", "ctx.ref", "ctx.role", "ctx.level",
    "event.k", "event.t", "event.f", "event.maybe", "event.requester",
    "1", "0", "2.5", "64", "'user'", "'x'", "True", "null", "None",
    "+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", ">=", " and ", " or ", "not ",
    " in ", " not in ", " is ", " is not ", " if ", " else ", "(", ")", "[", "]", ", ",
    "len(", "abs(", "min(", "max(", "active('a')", "active(", ".", "__class__", "lambda",
]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=14).map("".join), ENVS)
def test_fuzzed_text_never_crashes_and_typed_results_are_sound(source: str, env: Env) -> None:
    """Any text yields an Expression or diagnostics; an Expression evaluates to its type."""
    result = compile_expression(source, span_for(source), SCOPE)
    if isinstance(result, tuple):
        assert result
        return
    json.dumps(result.to_json(), allow_nan=False)
    try:
        value = result.evaluate(env.ctx, env.event, env.active)
    except ArithmeticError:
        return
    if not (isinstance(value, float) and not math.isfinite(value)):
        assert result.type.accepts(value), (source, value, result.type)


def test_parser_warnings_are_not_leaked(recwarn: pytest.WarningsRecorder) -> None:
    assert ok("1if ctx.b else 2").evaluate(CTX, PAYLOAD, ACTIVE) == 1
    assert ok("'\\d' == ctx.s").evaluate(CTX, PAYLOAD, ACTIVE) is False
    assert not recwarn.list

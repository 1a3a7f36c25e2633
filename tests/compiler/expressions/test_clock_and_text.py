"""`now`, duration literals, `str()` and `format()` in the expression language.

Each form is checked for its type, its value, the column of every diagnostic
around it, and its hostile inputs (a classified diagnostic or a bounded runtime
error, never an exception out of the compiler).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.clock import NoClockReading, clock_reading
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.language import MAX_FORMAT_ARGUMENTS
from statekit.compiler.expressions.scope import ExpressionScope, TypedEvent
from statekit.compiler.expressions.tree import tree_to_json
from statekit.compiler.value_types import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    BaseType,
    ValueType,
)

CONTEXT = {
    "period": INTEGER,
    "deadline": INTEGER,
    "name": STRING,
    "flag": BOOLEAN,
    "ratio": NUMBER,
    "maybe": ValueType(BaseType.INTEGER, nullable=True),
}
CTX: dict[str, Any] = {
    "period": 7,
    "deadline": 10_000_000,
    "name": "acme",
    "flag": True,
    "ratio": 0.5,
    "maybe": None,
}
LINE, COLUMN = 4, 9
NOW = 1_700_000_000_000


def _resolve(ref: str, span: SourceSpan) -> int | Diagnostic:
    return Diagnostic("unknown-state", Severity.ERROR, f"unknown state '{ref}'", span)


SCOPE = ExpressionScope(CONTEXT, TypedEvent({"at_ms": INTEGER}, "SCAN"), _resolve)


def compile_(source: str, expected: ValueType | None = None) -> Expression | tuple[Diagnostic, ...]:
    span = SourceSpan("chart.yaml", LINE, COLUMN, LINE, COLUMN + len(source))
    return compile_expression(source, span, SCOPE, expected)


def ok(source: str, expected: ValueType | None = None) -> Expression:
    result = compile_(source, expected)
    assert isinstance(result, Expression), result
    return result


def errors(source: str) -> tuple[Diagnostic, ...]:
    result = compile_(source)
    assert isinstance(result, tuple), f"{source!r} compiled"
    return result


def value(source: str) -> Any:
    with clock_reading(NOW):
        return ok(source).evaluate(CTX, {"at_ms": 5}, frozenset())


@pytest.mark.parametrize(
    ("source", "expected", "type_"),
    [
        ("now", NOW, INTEGER),
        ("now + 15m", NOW + 15 * 60_000, INTEGER),
        ("ctx.deadline - 2h", 10_000_000 - 7_200_000, INTEGER),
        ("500ms", 500, INTEGER),
        ("1d", 86_400_000, INTEGER),
        ("1h30m", 5_400_000, INTEGER),
        ("0ms", 0, INTEGER),
        ("now - event.at_ms > 30s", True, BOOLEAN),
        ("max(now, ctx.deadline) + 1s", NOW + 1000, INTEGER),
        ("'15m' + ' later'", "15m later", STRING),  # inside a string: text
        ("\"1d\" == '1d'", True, BOOLEAN),
        ("str(ctx.period)", "7", STRING),
        ("str(-12)", "-12", STRING),
        ("str(ctx.flag)", "true", STRING),
        ("str(false)", "false", STRING),
        ("str(ctx.name)", "acme", STRING),
        ("'inv-' + str(ctx.period)", "inv-7", STRING),
        ("format('inv-{}', ctx.period)", "inv-7", STRING),
        ("format('{}-{}/{}', ctx.name, ctx.period, ctx.flag)", "acme-7/true", STRING),
        ("format('{{literal}} {}', 1)", "{literal} 1", STRING),
        ("format('no placeholders')", "no placeholders", STRING),
        ("format('{}', str(now + 1d))", str(NOW + 86_400_000), STRING),
        ("format('{}', format('{}', len(str(ctx.period))))", "1", STRING),
        ("len(format('{}{}', ctx.period, ctx.period))", 2, INTEGER),
    ],
)
def test_values_and_types(source: str, expected: object, type_: ValueType) -> None:
    assert ok(source).type == type_
    assert value(source) == expected


def test_now_needs_a_clock_reading() -> None:
    expression = ok("now + 1s")
    with pytest.raises(NoClockReading):
        expression.evaluate(CTX, {}, frozenset())
    with clock_reading(None), pytest.raises(NoClockReading):
        expression.evaluate(CTX, {}, frozenset())
    with clock_reading(3):
        assert expression.evaluate(CTX, {}, frozenset()) == 1003
    assert expression.reads_clock() and not ok("ctx.period + 1s").reads_clock()


@pytest.mark.parametrize(
    ("source", "slug", "offset", "message"),
    [
        # every column after a duration literal is where the author wrote it
        ("now + 15m + ctx.nope", "expression-type", 12, "unknown context field 'nope'"),
        ("1h30m + ctx.name", "expression-type", 0, "'+' needs two numbers or two strings"),
        ("now + 15min", "expression-syntax", 6, "15min is not a duration literal"),
        ("now + 1.5h", "expression-syntax", 6, "1.5h is not a duration literal"),
        ("now + 1m1h", "expression-syntax", 6, "1m1h is not a duration literal: a whole"),
        ("now + 1_0m", "expression-syntax", 8, "invalid decimal literal"),
        ("(now + 1h) + 2x", "expression-syntax", 13, "2x is not a duration literal"),
        ("now + 99999999999999999999d", "expression-unsafe", 6, "does not fit in a signed 64-bit"),
        (f"now + {2**63}ms", "expression-unsafe", 6, "does not fit in a signed 64-bit"),
        ("now()", "expression-unsafe", 0, "calls are limited"),
        ("now.x", "expression-unsafe", 0, "attribute access"),
        ("now + 'x'", "expression-type", 0, "'+' needs two numbers or two strings"),
        ("str(ctx.ratio)", "expression-type", 4, "str() writes integers, strings and booleans"),
        ("str(ctx.maybe)", "expression-type", 4, "str() writes integers, strings and booleans"),
        ("str(1, 2)", "expression-type", 0, "str() takes exactly one argument (2 given)"),
        ("str()", "expression-type", 0, "str() takes exactly one argument (0 given)"),
        ("format(ctx.name, 1)", "expression-unsafe", 7, "takes a string literal first"),
        ("format()", "expression-unsafe", 0, "takes a string literal first"),
        ("format('{}-{}', 1)", "expression-type", 0, "2 placeholder(s) {} but 1 argument(s)"),
        ("format('x', 1)", "expression-type", 0, "0 placeholder(s) {} but 1 argument(s)"),
        ("format('{0}', 1)", "expression-unsafe", 7, "only empty placeholders {}"),
        ("format('{name}', 1)", "expression-unsafe", 7, "only empty placeholders {}"),
        ("format('}', 1)", "expression-unsafe", 7, "only empty placeholders {}"),
        ("format('{}', ctx.ratio)", "expression-type", 13, "format() writes integers"),
        ("format('{}', ctx.nope)", "expression-type", 13, "unknown context field 'nope'"),
        ("format('{}', x=1)", "expression-unsafe", 15, "keyword arguments are not allowed"),
        ("'inv-' + ctx.period", "expression-type", 0, "'+' needs two numbers or two strings"),
    ],
)
def test_diagnostics_are_positioned(source: str, slug: str, offset: int, message: str) -> None:
    found = errors(source)
    assert any(
        d.slug == slug and message in d.message and d.span.column == COLUMN + offset for d in found
    ), [(d.slug, d.span.column - COLUMN, d.message) for d in found]


def test_tree_json_of_the_new_forms() -> None:
    tree: Any = tree_to_json(ok("format('a{}', str(now + 1m))").tree)
    assert tree["kind"] == "format" and tree["template"] == "a{}"
    (call,) = tree["args"]
    assert call["kind"] == "call" and call["func"] == "str"
    assert call["args"][0]["left"] == {"kind": "now", "type": INTEGER.to_json()}
    assert call["args"][0]["right"]["value"] == 60_000


# -- the hostile family of the new forms: a classified diagnostic or a bounded value ------

HOSTILE = [
    "format('" + "{}" * 990 + "')",
    "format('" + "{}" * (MAX_FORMAT_ARGUMENTS + 1) + "'" + ", 1" * (MAX_FORMAT_ARGUMENTS + 1) + ")",
    "format('" + "{" * 1991 + "')",
    "format('" + "x" * 1990 + "')" + " + 'y'",
    "format('{}', " * 60 + "1" + ")" * 60,
    "str(" * 60 + "1" + ")" * 60,
    "str(str(str(now)))" * 200,
    "9" * 400 + "d",
    "now + " + "1d + " * 400 + "1d",
    "1" * 1990 + "ms",
    "now ** 64 ** 64",
    "str(now ** 10 ** 9)",
    "format('{}', now, now)",
    "format('%s', now)",
    "format('{}'.upper(), now)",
    "str(now).format(ctx)",
    "f'{now}'",
    "format(f'{now}')",
    "'{}'.format(now)",
    "now[0]",
    "15m(1)",
    "15m.x",
    "__(1)",
    "___",
    "now = 1",
]


@pytest.mark.parametrize("source", HOSTILE, ids=lambda s: s[:40])
def test_hostile_forms_are_refused(source: str) -> None:
    start = time.process_time()
    found = errors(source)
    assert found
    assert {d.slug for d in found} <= {"expression-unsafe", "expression-syntax", "expression-type"}
    assert all(d.span.line == LINE for d in found)
    assert time.process_time() - start < 2.0  # bounded: no work proportional to a value


@pytest.mark.parametrize(
    ("source", "error"),
    [
        # the largest values the checker lets through stay bounded at runtime: the engine
        # refuses a result past 64 bits (statekit.engine.evaluation), str() of the largest
        # power it admits is about 1,300 digits
        ("now * now * now", None),
        ("str(now ** 64)", None),
        ("format('{}{}', now ** 64, now ** 64)", None),
        ("now // (now - now)", ZeroDivisionError),
    ],
)
def test_runtime_extremes_are_bounded(source: str, error: type[Exception] | None) -> None:
    expression = ok(source)
    with clock_reading(2**63 - 1):
        if error is not None:
            with pytest.raises(error):
                expression.evaluate(CTX, {}, frozenset())
            return
        result = expression.evaluate(CTX, {}, frozenset())
    assert len(str(result)) < 5000

"""`+` of two lists (a new list, the left's elements then the right's) and `==`/`!=` of
two whole lists: typed as the lists' one item type, evaluated without touching either
operand, and refused with a positioned `expression-type` where the item types differ."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statekit.api import load
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, TypedEvent
from statekit.compiler.value_types import BOOLEAN, INTEGER, NUMBER, STRING, BaseType, ValueType
from statekit.engine.result import Status
from statekit.testing import Simulator


def _list(items: ValueType) -> ValueType:
    return ValueType(BaseType.LIST, items=items)


CONTEXT = {
    "ints": _list(INTEGER),
    "nums": _list(NUMBER),
    "words": _list(STRING),
    "grid": _list(_list(INTEGER)),
    "maybe": ValueType(BaseType.LIST, nullable=True, items=INTEGER),
}
CTX: dict[str, Any] = {
    "ints": [1, 2],
    "nums": [0.5],
    "words": ["a"],
    "grid": [[1], []],
    "maybe": None,
}
LINE, COLUMN = 3, 7


def _resolve(ref: str, span: SourceSpan) -> int | Diagnostic:
    return Diagnostic("unknown-state", Severity.ERROR, f"unknown state '{ref}'", span)


SCOPE = ExpressionScope(CONTEXT, TypedEvent({"more": _list(INTEGER)}, "ADD"), _resolve)


def _compile(source: str) -> Expression | tuple[Diagnostic, ...]:
    span = SourceSpan("chart.yaml", LINE, COLUMN, LINE, COLUMN + len(source))
    return compile_expression(source, span, SCOPE)


@pytest.mark.parametrize(
    ("source", "value", "kind"),
    [
        ("ctx.ints + event.more", [1, 2, 3], _list(INTEGER)),
        ("ctx.ints + [4]", [1, 2, 4], _list(INTEGER)),
        ("[] + ctx.ints", [1, 2], _list(INTEGER)),
        ("ctx.ints + []", [1, 2], _list(INTEGER)),
        ("ctx.ints + ctx.nums", [1, 2, 0.5], _list(NUMBER)),
        ("ctx.grid + [[5, 6]]", [[1], [], [5, 6]], _list(_list(INTEGER))),
        ("len(ctx.words + ctx.words)", 2, INTEGER),
        ("ctx.ints == [1, 2]", True, BOOLEAN),
        ("ctx.ints != [2, 1]", True, BOOLEAN),
        ("ctx.ints + [3] == [1, 2] + event.more", True, BOOLEAN),
        ("ctx.ints == []", False, BOOLEAN),
        ("ctx.grid == [[1], []]", True, BOOLEAN),
    ],
)
def test_lists_join_and_compare_as_whole_values(source: str, value: Any, kind: ValueType) -> None:
    compiled = _compile(source)
    assert isinstance(compiled, Expression), compiled
    assert compiled.type == kind
    before = {name: list(v) if isinstance(v, list) else v for name, v in CTX.items()}
    assert compiled.evaluate(CTX, {"more": [3]}, frozenset()) == value
    assert before == CTX  # neither operand changed: `+` makes a new list


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("ctx.ints + ctx.words", "'+' joins two lists of one item type, got list of integer"),
        ("ctx.ints + ['4']", "got list of integer and list of string"),
        ("ctx.ints + [[4]]", "got list of integer and list of list of integer"),
        ("ctx.maybe + ctx.ints", "may be null"),
        ("ctx.ints + 4", "'+' needs two numbers or two strings"),
        ("ctx.ints - ctx.ints", "'-' needs numbers"),
        ("ctx.ints == ctx.words", "can never be true"),
        ("ctx.ints == 0", "can never be true"),
    ],
)
def test_lists_of_two_item_types_are_a_positioned_type_error(source: str, message: str) -> None:
    found = _compile(source)
    assert isinstance(found, tuple), f"{source!r} compiled"
    (first,) = found
    assert first.slug == "expression-type"
    assert message in first.message
    assert (first.span.line, first.span.column) == (LINE, COLUMN)


BASKET = """\
statechart: basket
context:
  items: {type: list, items: string, default: []}
events:
  ADD: {skus: {type: list, items: string}}
  CHECK: {}
initial: open
states:
  open:
    on:
      ADD:
        do: [{assign: {items: ctx.items + event.skus}}]
      CHECK:
        - if: "ctx.items == ['a', 'b', 'c']"
          to: done
          else: NOT_YET
  done: {final: true}
"""


def test_a_chart_appends_with_plus_and_compares_whole_lists(tmp_path: Path) -> None:
    path = tmp_path / "basket.yaml"
    path.write_text(BASKET, encoding="utf-8")
    simulator = Simulator(load(path))
    assert simulator.send("ADD", {"skus": ["a"]}).status is Status.APPLIED
    assert simulator.send("CHECK").reason == "NOT_YET"
    assert simulator.send("ADD", {"skus": ["b", "c"]}).status is Status.APPLIED
    assert simulator.state.context["items"] == ["a", "b", "c"]
    assert simulator.send("CHECK").status is Status.APPLIED
    assert simulator.state.configuration == {"done"}

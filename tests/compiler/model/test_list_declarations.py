"""List fields and `foreach` compiled: each problem at its position."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text

from statekit.compiler.ir import Foreach

HEAD = """
statechart: l
context:
  xs: {type: list, items: integer, default: [1, 2]}
  n: {type: integer, default: 0}
events: {GO: {}}
initial: a
states:
  a:
"""


def _chart(body: str) -> str:
    return HEAD + "\n".join("    " + line for line in body.strip("\n").split("\n")) + "\n"


def test_a_foreach_compiles_with_typed_locals() -> None:
    chart = chart_of(
        _chart("entry: [{foreach: {array: ctx.xs, item: x, index: i, do: [{assign: {n: x + i}}]}}]")
    )
    (effect,) = chart.states[1].entry
    assert isinstance(effect, Foreach)
    assert (effect.item, effect.index, effect.array.source) == ("x", "i", "ctx.xs")


# (chart text, slug, line, column, words)
POSITIONED = [
    (
        HEAD.replace("default: [1, 2]", "default: [1, x]") + "    {}\n",
        "schema",
        3,
        45,
        "default[1]: expected integer, got string",
    ),
    (HEAD.replace("items: integer, ", "") + "    {}\n", "schema", 3, 7, "needs `items:`"),
    (
        HEAD.replace("default: [1, 2]", "default: [1, 99999999999999999999]") + "    {}\n",
        "schema",
        3,
        49,
        "outside the integer range",
    ),
    (
        _chart("entry: [{foreach: {array: ctx.n, item: x, do: []}}]"),
        "expression-type",
        9,
        31,
        "must be a list",
    ),
    (
        _chart("entry: [{foreach: {array: ctx.xs, item: ctx, do: []}}]"),
        "schema",
        9,
        45,
        "word of the expression language",
    ),
    (
        _chart("entry: [{foreach: {array: ctx.xs, item: x, index: x, do: []}}]"),
        "schema",
        9,
        55,
        "already a local",
    ),
    (
        _chart("entry: [{foreach: {array: ctx.xs, item: x, do: [{assign: {x: 1}}]}}]"),
        "expression-type",
        9,
        63,
        "unknown context field 'x'",
    ),
    (_chart("entry: [{assign: {n: x}}]"), "expression-unsafe", 9, 26, "name 'x' is not allowed"),
    (
        _chart("entry: [{assign: {n: \"ctx.xs['a']\"}}]"),
        "expression-type",
        9,
        34,
        "a list index is an integer",
    ),
    (
        _chart("entry: [{assign: {n: \"len([1, 'a'])\"}}]"),
        "expression-type",
        9,
        31,
        "the elements of a list have one type",
    ),
    (
        _chart("entry: [{assign: {xs: \"['a']\"}}]"),
        "expression-type",
        9,
        28,
        "expected list of integer, got list of string",
    ),
]


@pytest.mark.parametrize(("text", "slug", "line", "column", "words"), POSITIONED)
def test_each_problem_with_lists_is_positioned(
    text: str, slug: str, line: int, column: int, words: str
) -> None:
    result = compile_text(text)
    assert result.chart is None
    found = [d for d in result.diagnostics if d.slug == slug]
    assert found, result.diagnostics
    assert words in found[0].message, found[0]
    assert (found[0].span.line, found[0].span.column) == (line, column), found[0]

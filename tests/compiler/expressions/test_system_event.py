"""`_event` in expressions: `_event.data.<field>` is `event.<field>`; `_event.name`,
`.type`, `.origin`, `.invokeid` are typed; each misuse is reported at its column."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text

from statekit.compiler.expressions.checker import PAYLOAD_OF_ANY_EVENT
from statekit.compiler.expressions.tree import EventMeta, EventRef, iter_nodes
from statekit.compiler.pipeline import CompileResult

CHART = """
statechart: e
context:
  s: {type: string, default: ""}
events: {GO: {amount: integer}}
initial: a
states:
  a:
    on:
      GO: {if: "EXPR"}
"""
# the expression starts on line 9, column 17 (1-based) of the chart above


def _compile(expression: str) -> CompileResult:
    return compile_text(CHART.replace("EXPR", expression))


def test_event_data_field_is_the_payload_field_and_the_rest_is_typed() -> None:
    chart = chart_of(
        CHART.replace(
            "EXPR",
            "_event.data.amount > 0 and _event.name == 'GO' and _event.type != 'internal'"
            " and _event.origin is None and _event.invokeid is None",
        )
    )
    tree = chart.transitions[0].guards[0].expression.tree
    nodes = list(iter_nodes(tree))
    assert [n.field for n in nodes if isinstance(n, EventRef)] == ["amount"]
    assert [n.field for n in nodes if isinstance(n, EventMeta)] == [
        "name",
        "type",
        "origin",
        "invokeid",
    ]
    assert chart.transitions[0].guards[0].expression.reads_event()


POSITIONED = [
    ("_event.nme == 'GO'", "expression-unsafe", 17, "'_event' is only allowed as"),
    ("_event == 1", "expression-unsafe", 17, "'_event' is only allowed as"),
    ("_event.data == 1", "expression-unsafe", 17, "'_event' is only allowed as"),
    ("_event.data.nope == 1", "expression-type", 17, "event GO has no field 'nope'"),
    ("_event.type == 'extrnal'", "expression-type", 17, "'extrnal' is not one of"),
    ("_event.origin > 1", "expression-type", 17, ""),
    ("ctx.s == '' and _event.__class__ == 1", "expression-unsafe", 33, "only allowed as"),
]


@pytest.mark.parametrize(("expression", "slug", "column", "words"), POSITIONED)
def test_each_misuse_of_event_is_positioned(
    expression: str, slug: str, column: int, words: str
) -> None:
    result = _compile(expression)
    assert result.chart is None
    found = [d for d in result.diagnostics if d.slug == slug]
    assert found, result.diagnostics
    assert words in found[0].message
    assert (found[0].span.line, found[0].span.column) == (9, column)


@pytest.mark.parametrize("place", ["entry", "exit"])
def test_in_entry_and_exit_what_the_event_is_may_be_null(place: str) -> None:
    """An entry or exit runs for whichever event is bound, or for none (the start's
    entry): `_event.name` is `string or null` there, so a `string` field cannot take it."""
    text = CHART.replace(
        'on:\n      GO: {if: "EXPR"}', f"{place}: [{{assign: {{s: _event.name}}}}]"
    )
    result = compile_text(text)
    assert result.chart is None
    (found,) = result.diagnostics
    assert found.message == "assign to ctx.s: expected string, got string or null"
    nullable = text.replace('s: {type: string, default: ""}', "s: {type: string, nullable: true}")
    assert compile_text(nullable).chart is not None


@pytest.mark.parametrize("place", ["entry", "exit"])
@pytest.mark.parametrize("read", ["_event.data.amount", "event.amount"])
def test_in_entry_and_exit_the_payload_is_not_available(place: str, read: str) -> None:
    """Which payload fields there are depends on which event enters or exits: a read is
    an error that says so and what to do instead, at its column."""
    text = CHART.replace('on:\n      GO: {if: "EXPR"}', f"{place}: [{{assign: {{s: {read} > 0}}}}]")
    result = compile_text(text)
    assert result.chart is None
    (found,) = [d for d in result.diagnostics if "not available" in d.message]
    assert found.slug == "expression-type"
    assert found.message == (
        f"assign to ctx.s: {read} is not available here: entry and exit actions run for"
        " whichever event"
        " enters or exits"
    )
    assert found.notes == (PAYLOAD_OF_ANY_EVENT,)
    assert (found.span.line, found.span.column) == (8, 26 if place == "entry" else 25)

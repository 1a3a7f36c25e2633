"""Null narrowing in effect lists: a nullable context field read after an effect that
gives it a value never null is not null there; every read that may still see null is
an `expression-type` error at its own position."""

from __future__ import annotations

from typing import Any

import pytest
from chart_helpers import compile_text, machine

from statekit.engine.result import Status

HEAD = """
statechart: tally
context:
  total: {type: integer, nullable: true}
  note: {type: string, nullable: true}
events: {ADD: {amount: integer, maybe: {type: integer, nullable: true}}}
initial: open
states:
  open:
    on:
      ADD:
        do:
"""
FIRST_LINE = 12  # the line of the first effect of the list
BUMP = "{assign: {total: ctx.total + 1}}"  # a read that needs total not null


def _chart(effects: list[str]) -> str:
    return HEAD + "".join(f"          - {effect}\n" for effect in effects)


ZERO = "{assign: {total: 0}}"
NULL = "{assign: {total: null}}"


def _if(cond: str, then: list[str], otherwise: list[str] | None = None) -> str:
    tail = "" if otherwise is None else f", else: [{', '.join(otherwise)}]"
    return f"{{if: {{cond: {cond}, then: [{', '.join(then)}]{tail}}}}}"


def _foreach(array: str, body: list[str]) -> str:
    return f"{{foreach: {{array: '{array}', item: i, do: [{', '.join(body)}]}}}}"


AMOUNT = "event.amount > 1"
SET = "ctx.total is not None"

# (what the case shows, the effect list, the 0-based indexes of the effects whose read
# of ctx.total is an error: "may be null")
CASES: list[tuple[str, list[str], list[int]]] = [
    ("read before any assign", [BUMP], [0]),
    ("assign then read", [ZERO, BUMP, BUMP], []),
    ("assign of a payload field never null", ["{assign: {total: event.amount}}", BUMP], []),
    ("read before, then assign, then read", [BUMP, ZERO, BUMP], [0]),
    ("an assign with an error is reported once, not at the reads after it", [BUMP, BUMP], [0]),
    ("assign null widens it back", [ZERO, NULL, BUMP], [2]),
    ("assign of a nullable value", [ZERO, "{assign: {total: event.maybe}}", BUMP], [2]),
    ("later keys of the same assign", ["{assign: {total: 0, note: \"'n'\"}}", BUMP], []),
    ("another field does not narrow", ["{assign: {note: \"'n'\"}}", BUMP], [1]),
    ("inside an if after the assign", [ZERO, _if("'true'", [BUMP])], []),
    ("if/else that both assign", [_if(AMOUNT, ["{assign: {total: 1}}"], [ZERO]), BUMP], []),
    ("a branch that does not assign", [_if(AMOUNT, ["{assign: {total: 1}}"]), BUMP], [1]),
    (
        "an elif that does not assign",
        [
            "{if: {cond: event.amount > 1, then: [{assign: {total: 1}}],"
            " elif: [{cond: event.amount > 0, then: []}], else: [{assign: {total: 2}}]}}",
            BUMP,
        ],
        [1],
    ),
    ("a branch that assigns null", [ZERO, _if(AMOUNT, [NULL]), BUMP], [2]),
    ("an 'is not None' condition narrows its branch", [_if(SET, [BUMP])], []),
    ("in an 'and' of the condition", [_if(f"event.amount > 0 and {SET}", [BUMP])], []),
    ("not its else branch", [_if(SET, [], [BUMP])], [0]),
    ("not after the if", [_if(SET, []), BUMP], [1]),
    ("an 'and' narrows its later operands", [_if(f"{SET} and ctx.total > 2", [])], []),
    ("not its earlier ones", [_if(f"ctx.total > 2 and {SET}", [])], [0]),
    ("an 'or' does not narrow its operands", [_if("ctx.total is None or ctx.total > 2", [])], [0]),
    ("an 'or' does not narrow", [_if(f"{SET} or event.amount > 0", [BUMP])], [0]),
    ("foreach body after the assign", [ZERO, _foreach("[1, 2]", [BUMP])], []),
    (  # every pass but the first would read null
        "foreach body that reads, then assigns null",
        [ZERO, _foreach("[1, 2]", [BUMP, NULL])],
        [1],
    ),
    (  # every pass reads a number
        "foreach body that assigns null then a number before reading",
        [ZERO, _foreach("[1]", [NULL, "{assign: {total: i}}", BUMP]), BUMP],
        [],
    ),
    ("foreach that assigns: it may run no time", [_foreach("[1]", [ZERO]), BUMP], [1]),
    (
        "nested: an if in a foreach in an if",
        [ZERO, _if("event.amount > 0", [_foreach("[1]", [_if("'true'", [BUMP])])])],
        [],
    ),
    (
        "nested: an inner if that assigns null, read after the loop",
        [ZERO, _foreach("[1]", [_if("i > 0", [NULL])]), BUMP],
        [2],
    ),
    (
        "nested: an inner if that assigns null, read in the next pass",
        [ZERO, _foreach("[1]", [BUMP, _if("i > 0", [NULL])])],
        [1],
    ),
]


@pytest.mark.parametrize(("effects", "errors"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_read_is_an_error_exactly_where_the_field_may_be_null(
    effects: list[str], errors: list[int]
) -> None:
    result = compile_text(_chart(effects))
    found = sorted(
        d.span.line - FIRST_LINE
        for d in result.diagnostics
        if d.slug == "expression-type" and "may be null" in d.message
    )
    assert found == errors, [f"{d.span} {d.message}" for d in result.diagnostics]
    assert (result.chart is None) == bool(errors), result.diagnostics
    if not errors:
        assert not result.diagnostics


def test_the_narrowed_reads_run_on_the_values_the_effects_gave() -> None:
    chart = machine(
        _chart(
            [
                "{assign: {total: 0}}",
                "{assign: {total: ctx.total + event.amount}}",
                "{foreach: {array: '[1, 2, 3]', item: i, do: [{assign: {total: ctx.total + i}}]}}",
                "{if: {cond: ctx.note is not None, then: [{assign: {note: \"ctx.note + '!'\"}}]}}",
            ]
        )
    )
    payload: dict[str, Any] = {"amount": 10, "maybe": None}
    result = chart.send(chart.start(), "ADD", payload)
    assert result.status is Status.APPLIED
    assert (result.state.context["total"], result.state.context["note"]) == (16, None)


GUARDED = """
statechart: best
context:
  best: {type: integer, nullable: true}
events:
  GO: {n: integer}
initial: a
states:
  a:
    on:
      GO:
        - if: ctx.best is not None and ctx.best + 1 > event.n
          to: b
        - do: [{assign: {best: event.n}}]
  b:
    reject: {"*": DONE}
"""


def test_a_guard_reads_a_field_after_its_not_none_test_in_an_and() -> None:
    chart = machine(GUARDED)
    first = chart.send(chart.start(), "GO", {"n": 3})  # best is null: the guard is false
    assert first.status is Status.APPLIED
    assert first.state.context["best"] == 3
    second = chart.send(first.state, "GO", {"n": 3})  # 3 + 1 > 3
    assert second.status is Status.APPLIED
    assert second.state.configuration == frozenset({"b"})

"""The `if` effect compiled: conditions typed as booleans in the scope of the effects
around them, branches compiled as effect lists, each problem at its own position."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text

from statekit.compiler.ir import Assign, Conditional, Raise

HEAD = """
statechart: c
context:
  n: {type: integer, default: 0}
  tier: {type: string, default: none}
events: {GO: {amount: integer}, UP: {}}
initial: a
states:
  a:
"""


def _chart(body: str) -> str:
    return HEAD + "\n".join("    " + line for line in body.strip("\n").split("\n")) + "\n  b: {}\n"


def test_branches_compile_in_order_with_their_effects() -> None:
    chart = chart_of(
        _chart("""
on:
  GO:
    to: b
    do:
      - if:
          cond: event.amount > 10
          then: [{assign: {tier: "'big'"}}, {raise: UP}]
          elif: [{cond: event.amount > 0, then: [{assign: {tier: "'small'"}}]}]
          else: [{assign: {n: 0}}]
""")
    )
    (effect,) = chart.transitions[0].effects
    assert isinstance(effect, Conditional)
    assert [b.check.expression.source for b in effect.branches] == [
        "event.amount > 10",
        "event.amount > 0",
    ]
    assert [type(e) for e in effect.branches[0].effects] == [Assign, Raise]
    assert [type(e) for e in effect.otherwise] == [Assign]


# (the body under state `a`, the slug, the 1-based line and column of the diagnostic,
# words of its message); the chart's head is 8 lines, so `a`'s body starts on line 9
POSITIONED = [
    (  # a condition that is not a boolean: no truthiness
        "entry:\n  - if: {cond: ctx.n, then: []}",
        "expression-type",
        10,
        20,
        "'if' cond: expected boolean",
    ),
    (  # an unknown field in an elif's condition, at the field
        "entry:\n  - if:\n      cond: ctx.n > 0\n      then: []\n"
        "      elif: [{cond: ctx.nn > 1, then: []}]",
        "expression-type",
        13,
        25,
        "'elif' 1 cond: unknown context field 'nn'",
    ),
    (  # the payload is not in scope in entry actions, in a condition either
        "entry:\n  - if: {cond: event.amount > 0, then: []}",
        "expression-type",
        10,
        20,
        "not available here",
    ),
    (  # an effect inside a branch is checked as anywhere else
        "entry:\n  - if: {cond: ctx.n > 0, then: [{assign: {nope: 1}}]}",
        "expression-type",
        10,
        48,
        "unknown context field 'nope'",
    ),
    (  # the else branch too
        "entry:\n  - if: {cond: ctx.n > 0, then: [], else: [{raise: NOPE}]}",
        "unknown-event",
        10,
        56,
        "undeclared event 'NOPE'",
    ),
    (  # `then` is required
        "entry:\n  - if: {cond: ctx.n > 0}",
        "schema",
        10,
        13,
        "missing required key 'then'",
    ),
    (  # an unknown key of the `if` mapping
        "entry:\n  - if: {cond: ctx.n > 0, then: [], otherwise: []}",
        "schema",
        10,
        41,
        "unknown key 'otherwise'",
    ),
]


@pytest.mark.parametrize(("body", "slug", "line", "column", "words"), POSITIONED)
def test_each_problem_of_an_if_effect_is_positioned(
    body: str, slug: str, line: int, column: int, words: str
) -> None:
    result = compile_text(_chart(body))
    assert result.chart is None
    found = [d for d in result.diagnostics if d.slug == slug]
    assert found, result.diagnostics
    d = found[0]
    assert words in d.message + " ".join(d.notes), d
    assert (d.span.line, d.span.column) == (line, column), d


def test_an_if_effect_changes_the_digest_only_of_charts_that_use_it() -> None:
    plain = chart_of(_chart("entry: [{assign: {n: 1}}]"))
    guarded = chart_of(_chart("entry: [{if: {cond: ctx.n == 0, then: [{assign: {n: 1}}]}}]"))
    other = chart_of(_chart("entry: [{if: {cond: ctx.n == 1, then: [{assign: {n: 1}}]}}]"))
    assert len({plain.digest, guarded.digest, other.digest}) == 3

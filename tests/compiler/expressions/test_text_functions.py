"""`starts_with(s, prefix)`, `ends_with(s, suffix)` and `matches(s, 'pattern')` in the
expression language: their values (null reads as no match), one positioned diagnostic per
misuse, RE2's refusals as compile errors, linear time on patterns that make Python's `re`
backtrack exponentially, and agreement with `re.search` on the syntax both share."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cli_process import statekit
from hypothesis import given
from hypothesis import strategies as st

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, TypedEvent
from statekit.compiler.expressions.tree import tree_to_json
from statekit.compiler.value_types import BOOLEAN, INTEGER, STRING, BaseType, ValueType
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_source

CONTEXT = {
    "ref": STRING,
    "maybe": ValueType(BaseType.STRING, nullable=True),
    "count": INTEGER,
    "kind": ValueType(BaseType.STRING, enum=("invoice", "credit")),
}
LINE, COLUMN = 4, 9


def _resolve(ref: str, span: SourceSpan) -> int | Diagnostic:
    return Diagnostic("unknown-state", Severity.ERROR, f"unknown state '{ref}'", span)


SCOPE = ExpressionScope(CONTEXT, TypedEvent({"email": STRING}, "SIGN_UP"), _resolve)


def compile_(source: str) -> Expression | tuple[Diagnostic, ...]:
    span = SourceSpan("chart.yaml", LINE, COLUMN, LINE, COLUMN + len(source))
    return compile_expression(source, span, SCOPE, BOOLEAN)


def value(source: str, ctx: dict[str, Any], email: str = "") -> Any:
    compiled = compile_(source)
    assert isinstance(compiled, Expression), compiled
    return compiled.evaluate(ctx, {"email": email}, frozenset())


def ctx(ref: str = "INV-2024-7", maybe: str | None = None) -> dict[str, Any]:
    return {"ref": ref, "maybe": maybe, "count": 3, "kind": "invoice"}


@pytest.mark.parametrize(
    ("source", "context", "expected"),
    [
        ("starts_with(ctx.ref, 'INV-')", ctx(), True),
        ("starts_with(ctx.ref, 'inv-')", ctx(), False),  # case matters
        ("starts_with(ctx.ref, '')", ctx(), True),
        ("starts_with(ctx.ref, ctx.ref + '!')", ctx(), False),  # longer than the text
        ("starts_with('', '')", ctx(), True),
        ("ends_with(ctx.ref, '-7')", ctx(), True),
        ("ends_with(ctx.ref, '2024')", ctx(), False),
        ("ends_with(ctx.ref, ctx.ref)", ctx(), True),
        ("ends_with(ctx.ref, 'é')", ctx("café"), True),  # characters, not bytes
        ("starts_with(ctx.kind, 'inv')", ctx(), True),  # an enum of strings is a string
        ("starts_with(ctx.maybe, 'INV-')", ctx(maybe="INV-1"), True),
        ("starts_with(ctx.maybe, 'INV-')", ctx(maybe=None), False),  # null: no match
        ("ends_with(ctx.maybe, '')", ctx(maybe=None), False),
        ("not starts_with(ctx.maybe, 'x')", ctx(maybe=None), True),
        ("matches(ctx.ref, '^INV-[0-9]{4}-[0-9]+$')", ctx(), True),
        ("matches(ctx.ref, '[0-9]{4}')", ctx(), True),  # a search: anywhere in the text
        ("matches(ctx.ref, '^[0-9]{4}')", ctx(), False),  # anchored: at the start only
        ("matches(ctx.ref, '')", ctx(""), True),
        ("matches(ctx.maybe, '.*')", ctx(maybe=None), False),  # null: no match
        ("matches(ctx.maybe, 'a|b')", ctx(maybe="cab"), True),
        ("matches(ctx.ref, '(?i)inv')", ctx(), True),  # RE2's flags
        ("matches(ctx.ref, r'\\d+-\\d+$')", ctx(), True),  # a raw string keeps the backslashes
        ("matches(ctx.ref, '^.{4}$')", ctx("ça va"[:4]), True),  # `.` is one character
    ],
)
def test_a_text_function_has_the_value_its_docs_give(
    source: str, context: dict[str, Any], expected: bool
) -> None:
    assert value(source, context) is expected


def test_a_guard_reads_the_payload() -> None:
    address = "matches(event.email, '^[^@ ]+@[^@ ]+[.][a-z]+$')"
    guard = f"{address} and not ends_with(event.email, '.test')"
    assert value(guard, ctx(), "ada@example.org") is True
    assert value(guard, ctx(), "ada@example.test") is False
    assert value(guard, ctx(), "ada at example.org") is False


def test_the_tree_keeps_the_pattern_as_written() -> None:
    compiled = compile_("matches(ctx.ref, '^INV-') or starts_with(ctx.ref, 'CR-')")
    assert isinstance(compiled, Expression)
    tree: Any = tree_to_json(compiled.tree)
    assert tree["kind"] == "boolop"
    first, second = tree["values"]
    assert (first["kind"], first["pattern"], first["text"]["field"]) == ("matches", "^INV-", "ref")
    assert (second["kind"], second["func"]) == ("call", "starts_with")


@pytest.mark.parametrize(
    ("source", "slug", "column", "words"),
    [
        ("starts_with(ctx.count, 'a')", "expression-type", 12, "reads a string, but ctx.count is"),
        ("ends_with(ctx.ref, ctx.count)", "expression-type", 19, "suffix is a string, but"),
        ("ends_with(ctx.ref, ctx.maybe)", "expression-type", 19, "ctx.maybe is string or null"),
        ("starts_with(ctx.ref)", "expression-type", 0, "takes a string and a prefix (1 argument"),
        ("ends_with(ctx.ref, 'a', 'b')", "expression-type", 0, "(3 argument(s) given)"),
        ("matches(ctx.count, 'a')", "expression-type", 8, "reads a string, but ctx.count"),
        ("matches(ctx.ref, ctx.ref)", "expression-unsafe", 17, "pattern as a string literal"),
        ("matches(ctx.ref, 'a' + 'b')", "expression-unsafe", 17, "pattern as a string literal"),
        ("matches(ctx.ref, pattern='a')", "expression-unsafe", 25, "keyword arguments"),
        ("starts_with", "expression-unsafe", 0, "'starts_with' can only be called"),
        ("ctx.ref.startswith('a')", "expression-unsafe", 0, "calls are limited to"),
    ],
)
def test_a_misused_text_function_is_one_positioned_error(
    source: str, slug: str, column: int, words: str
) -> None:
    result = compile_(source)
    assert isinstance(result, tuple), f"{source!r} compiled"
    (error,) = result
    assert (error.slug, error.span.line, error.span.column) == (slug, LINE, COLUMN + column)
    assert words in error.message, error.message


@pytest.mark.parametrize(
    ("pattern", "engine_says"),
    [
        ("(a", "missing ): (a"),
        ("a)", "unexpected ): a)"),
        ("[a-", "missing ]: [a-"),
        ("a**", "bad repetition operator: **"),
        ("x{2,1}", "invalid repetition size: {2,1}"),
        ("(a)\\\\1", "invalid escape sequence: \\1"),  # a backreference
        ("(?=a)", "invalid perl operator: (?="),  # look-ahead
        ("(?<!a)b", "invalid perl operator: (?<!"),  # look-behind
        ("a{1001}", "invalid repetition size: {1001}"),
        ("(.{100}){100}", "invalid repetition size: {100}"),  # RE2 bounds repetition
        ("\\\\pL{1000}", "pattern too large - compile failed"),  # and memory
    ],
)
def test_a_pattern_re2_refuses_is_a_compile_error_quoting_it(
    pattern: str, engine_says: str
) -> None:
    source = f"matches(ctx.ref, '{pattern}')"
    result = compile_(source)
    assert isinstance(result, tuple), f"{source!r} compiled"
    (error,) = result
    assert (error.slug, error.span.column) == ("expression-syntax", COLUMN + 17)
    assert "is not a regular expression RE2 accepts: " in error.message
    assert engine_says in error.message, error.message


_LONG = 100_000


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        # Python's `re` doubles its time with each extra character on the failing inputs
        # (2^length steps: 30 characters take seconds, these would not finish in a lifetime)
        ("(a+)+$", "a" * _LONG + "!", False),
        ("(a+)+$", "!" + "a" * _LONG, True),
        ("^(a|aa)+$", "a" * _LONG + "!", False),
        ("^(a|aa)+$", "a" * _LONG, True),
        ("(x+x+)+y", "x" * _LONG, False),
        ("(x+x+)+y", "x" * _LONG + "y", True),
        ("^(\\\\w+\\\\s?)*$", "word " * (_LONG // 5) + "!", False),
        ("^(\\\\w+\\\\s?)*$", "word " * (_LONG // 5), True),
    ],
)
def test_a_pattern_that_backtracks_exponentially_in_re_is_decided(
    pattern: str, text: str, expected: bool
) -> None:
    # never run through `re` here: it would not return
    assert value(f"matches(ctx.ref, '{pattern}')", ctx(text)) is expected


# -- agreement with Python's `re` on the syntax both engines share ---------------------

_ATOMS = st.sampled_from(["a", "b", ".", "[ab]", "[^a]", "[a-c]", "\\d", "x"])


def _quantified(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quantifier = st.sampled_from(["*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?"])
    return st.tuples(inner, quantifier).map(lambda p: f"(?:{p[0]}){p[1]}")


_PATTERNS = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        _quantified(inner),
        st.lists(inner, min_size=2, max_size=3).map("".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + "|".join(xs) + ")"),
    ),
    max_leaves=6,
)
_ANCHORED = st.tuples(st.sampled_from(["", "^"]), _PATTERNS, st.sampled_from(["", "$"])).map(
    "".join
)
_TEXTS = st.text(alphabet="abcx1", max_size=10)


@given(pattern=_ANCHORED, texts=st.lists(_TEXTS, min_size=1, max_size=6))
def test_matches_agrees_with_re_search_on_the_syntax_both_share(
    pattern: str, texts: list[str]
) -> None:
    compiled = compile_(f"matches(ctx.ref, {pattern!r})")
    assert isinstance(compiled, Expression), (pattern, compiled)
    for text in texts:
        ours = compiled.evaluate(ctx(text), {"email": ""}, frozenset())
        assert ours is (re.search(pattern, text) is not None), (pattern, text)


# -- the analysis -------------------------------------------------------------------

_ROUTING = """\
statechart: routing
events:
  FILE: {ref: string}
initial: inbox
states:
  inbox:
    on:
      FILE:
        - {to: both, if: "starts_with(event.ref, 'INV-') and starts_with(event.ref, 'CR-')"}
        - {to: invoices, if: "starts_with(event.ref, 'INV-') and ends_with(event.ref, '-9')"}
        - {to: credits, if: "matches(event.ref, '^CR-[0-9]+$')"}
  both: {final: true}
  invoices: {final: true}
  credits: {final: true}
"""


def test_the_analysis_decides_prefixes_and_takes_a_pattern_both_ways() -> None:
    report = lint_source(_ROUTING, "routing.yaml", LintConfig())
    found = {(d.slug, d.span.line) for d in report.diagnostics}
    # no text starts with both 'INV-' and 'CR-': the solver proves it; a pattern is an
    # unknown outcome, never a reason to call `credits` unreachable
    assert found == {("unreachable-transition", 9), ("unreachable-state", 12)}, found


def test_a_printed_path_carries_a_text_with_the_prefix_and_the_suffix(tmp_path: Path) -> None:
    chart = tmp_path / "routing.yaml"
    chart.write_text(_ROUTING, encoding="utf-8")
    printed = statekit("paths", str(chart))
    assert printed.returncode == 0, printed.stderr
    # replayed through the engine: it starts with 'INV-' and ends with '-9'
    assert 'FILE → {invoices}\n      payload {"ref": "INV--9"}' in printed.stdout, printed.stdout

"""The loader: positioned tree, YAML 1.1 surprises turned off, every bad input a diagnostic."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.source import loader
from statekit.compiler.source.limits import DEFAULT_LIMITS, Limits
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode, to_plain

F = "chart.yaml"

VALID = """\
statechart: payment
version: 2
events:
  START_PAY: {amount: integer}
  on: {}
initial: created
states:
  created:
    on:
      START_PAY: {to: processing, do: [{assign: {refundable: event.amount}}]}
  processing:
    on:
      off: done
  done: {final: true}
"""


@pytest.fixture(params=["libyaml", "pure-python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run a test with libyaml's C parser and again with PyYAML's pure-Python parser."""
    if request.param == "pure-python":
        monkeypatch.setattr(loader, "_CParser", None)
    elif not yaml.__with_libyaml__:
        pytest.fail("PyYAML without libyaml: reinstall PyYAML from its wheels (they ship it)")
    yield request.param


def load(source: bytes | str, limits: Limits = DEFAULT_LIMITS) -> MappingNode:
    """Load text that must give a tree and no diagnostics."""
    root, diagnostics = load_yaml(source, F, limits)
    assert diagnostics == ()
    assert isinstance(root, MappingNode)
    return root


def problems(source: bytes | str, limits: Limits = DEFAULT_LIMITS) -> tuple[Diagnostic, ...]:
    """Load text that must give diagnostics, all errors."""
    _, diagnostics = load_yaml(source, F, limits)
    assert diagnostics
    assert all(d.severity is Severity.ERROR for d in diagnostics)
    return diagnostics


def only(source: bytes | str, limits: Limits = DEFAULT_LIMITS) -> Diagnostic:
    """The single diagnostic for `source`, which must not give a tree."""
    root, diagnostics = load_yaml(source, F, limits)
    assert root is None
    assert len(diagnostics) == 1, diagnostics
    assert diagnostics[0].severity is Severity.ERROR
    return diagnostics[0]


def where(d: Diagnostic) -> tuple[str, int, int]:
    return d.slug, d.span.line, d.span.column


def child(node: Node | None, *path: str | int) -> Node:
    for part in path:
        if isinstance(node, MappingNode) and isinstance(part, str):
            node = node.get(part)
        elif isinstance(node, SequenceNode) and isinstance(part, int):
            node = node.items[part]
        else:
            raise AssertionError(f"no {part!r} in {node!r}")
    assert node is not None
    return node


def value(node: Node | None, *path: str | int) -> object:
    leaf = child(node, *path)
    assert isinstance(leaf, ScalarNode)
    return leaf.value


def values(node: Node | None, *path: str | int) -> list[object]:
    """The scalar values of a sequence, or of a mapping's values."""
    parent = child(node, *path)
    assert not isinstance(parent, ScalarNode)
    items = parent.items if isinstance(parent, SequenceNode) else [v for _, v in parent.items]
    return [value(item) for item in items]


# --- the tree and its positions ---------------------------------------------


def test_valid_chart_loads_the_same_with_both_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    with_c = load(VALID)
    monkeypatch.setattr(loader, "_CParser", None)
    assert load(VALID) == with_c
    assert value(with_c, "states", "done", "final") is True
    assert list(with_c.keys())[:3] == ["statechart", "version", "events"]


def text_at(source: str, span: SourceSpan) -> str:
    """The source text a span covers (1-based, end exclusive)."""
    lines = source.splitlines(keepends=True)
    start = sum(map(len, lines[: span.line - 1])) + span.column - 1
    end = sum(map(len, lines[: span.end_line - 1])) + span.end_column - 1
    return source[start:end]


def test_positions_of_nested_nodes(parser: str) -> None:
    root = load(VALID)

    def text(*path: str | int) -> str:
        return text_at(VALID, child(root, *path).span)

    assert root.span == SourceSpan(F, 1, 1, 14, 22)  # a block mapping ends with its last value
    assert child(root, "statechart").span == SourceSpan(F, 1, 13, 1, 20)
    assert child(root, "events").span == SourceSpan(F, 4, 3, 5, 9)
    assert text("events") == "START_PAY: {amount: integer}\n  on: {}"
    assert text("events", "START_PAY") == "{amount: integer}"
    assert text("events", "START_PAY", "amount") == "integer"
    transition = ("states", "created", "on", "START_PAY")
    assert text(*transition) == "{to: processing, do: [{assign: {refundable: event.amount}}]}"
    assert child(root, *transition).span == SourceSpan(F, 10, 18, 10, 78)
    assert text(*transition, "do") == "[{assign: {refundable: event.amount}}]"
    assert text(*transition, "do", 0) == "{assign: {refundable: event.amount}}"
    assert text(*transition, "do", 0, "assign", "refundable") == "event.amount"
    assert child(root, *transition, "do", 0, "assign", "refundable").span == SourceSpan(
        F, 10, 62, 10, 74
    )
    assert text("states", "processing") == "on:\n      off: done"
    assert text("states", "done") == "{final: true}"
    states = child(root, "states")
    assert isinstance(states, MappingNode)
    assert states.key_node("done") == ScalarNode("done", SourceSpan(F, 14, 3, 14, 7))


def test_block_collection_ends_at_its_last_child_not_after_comments(parser: str) -> None:
    root = load("a:\n  - x\n  - y   # trailing\n\n# comment\nb: |\n  text\n")
    assert child(root, "a").span == SourceSpan(F, 2, 3, 3, 6)
    assert child(root, "b").span == SourceSpan(F, 7, 3, 7, 7)  # one line: the content line
    assert value(root, "b") == "text\n"


def test_block_scalar_spans(parser: str) -> None:
    source = "a: >-\n  one line\nb: |\n  two\n  lines\nc: >\n\n  blank first\nd: |2\n    x\n"
    root = load(source)
    assert child(root, "a").span == SourceSpan(F, 2, 3, 2, 11)
    assert text_at(source, child(root, "a").span) == value(root, "a") == "one line"
    # not one content line right after the indicator: the span starts at the indicator
    assert child(root, "b").span.line == 3 and child(root, "b").span.column == 4
    assert child(root, "c").span.line == 6 and child(root, "c").span.column == 4
    assert child(root, "d").span.line == 9 and child(root, "d").span.column == 4  # "  x"


def test_columns_count_characters_not_bytes(parser: str) -> None:
    root = load("é: {ü: ß}\n".encode())
    assert child(root, "é", "ü").span == SourceSpan(F, 1, 8, 1, 9)


def test_bom_is_stripped_without_moving_positions(parser: str) -> None:
    for source in (b"\xef\xbb\xbfstatechart: x\n", "\ufeffstatechart: x\n"):
        root = load(source)
        assert root.key_node("statechart") == ScalarNode("statechart", SourceSpan(F, 1, 1, 1, 11))


# --- scalars and keys -------------------------------------------------------


def test_yaml11_booleans_stay_strings_as_keys_and_values(parser: str) -> None:
    root = load("on: off\noff: on\nyes: no\nno: yes\ny: n\nn: y\nOn: OFF\n")
    assert list(root.keys()) == ["on", "off", "yes", "no", "y", "n", "On"]
    assert values(root) == ["off", "on", "no", "yes", "n", "y", "OFF"]


def test_only_true_and_false_are_booleans(parser: str) -> None:
    root = load("a: [true, True, TRUE, false, False, FALSE, tRUE, fAlse]\n")
    assert values(root, "a") == [True, True, True, False, False, False, "tRUE", "fAlse"]


def test_core_scalars_resolve_as_yaml_11(parser: str) -> None:
    root = load(
        "nulls: [~, null, Null, NULL]\nempty:\n"
        "ints: [0, -7, 1_000, 0x1F, 017, 0b101, 1:30]\n"
        "floats: [1.5, -0.5, 1.0e+3, .inf, -.Inf]\n"
        "strings: [2001-12-14, 2001-12-14t21:59:43.10-05:00, 1e3, '1', \"true\", =, nil]\n"
    )
    assert values(root, "nulls") == [None] * 4
    assert value(root, "empty") is None
    assert values(root, "ints") == [0, -7, 1000, 31, 15, 5, 90]
    assert values(root, "floats") == [1.5, -0.5, 1000.0, float("inf"), float("-inf")]
    assert values(root, "strings") == [
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "1e3",
        "1",
        "true",
        "=",
        "nil",
    ]


def test_keys_are_their_source_text(parser: str) -> None:
    root = load('1: a\ntrue: b\n~: c\n1.5: d\n"quoted key": e\n2001-01-01: f\n0x10: g\n')
    assert list(root.keys()) == ["1", "true", "~", "1.5", "quoted key", "2001-01-01", "0x10"]
    assert all(isinstance(k.value, str) for k, _ in root.items)


def test_core_tags_are_allowed(parser: str) -> None:
    root = load(
        "a: !!str 1\nb: !!int '3'\nc: !!float 1\nd: !!bool TRUE\ne: !!null ''\n"
        "f: !!map {x: 1}\ng: !!seq [1]\nh: ! 12\n"
    )
    assert [value(root, k) for k in "abcdeh"] == ["1", 3, 1.0, True, None, "12"]
    assert isinstance(child(root, "f"), MappingNode)
    assert isinstance(child(root, "g"), SequenceNode)


def test_aliases_within_limits_are_shared_nodes(parser: str) -> None:
    root = load("x: &a {k: [1, 2]}\ny: *a\nz: &s on\n*s : 2\n")
    assert child(root, "y") is child(root, "x")
    assert value(root, "z") == "on"
    assert value(root, "on") == 2  # an aliased scalar key is its source text too


# --- every diagnostic -------------------------------------------------------


def test_file_larger_than_max_bytes() -> None:
    d = only("a: " + "x" * (DEFAULT_LIMITS.max_bytes - 2))
    assert where(d) == ("yaml-limits", 1, 1)
    assert str(DEFAULT_LIMITS.max_bytes) in d.message
    assert where(only("é: 1234567", Limits(max_bytes=10))) == ("yaml-limits", 1, 1)  # UTF-8 bytes
    assert load("a: 1234567", Limits(max_bytes=10))


def test_non_utf8_bytes_point_at_the_first_bad_byte(parser: str) -> None:
    d = only(b"statechart: x\nstates: {\xc3\xa9: \xff}\n")
    assert where(d) == ("yaml-syntax", 2, 13)
    assert "not valid UTF-8" in d.message
    assert "UTF-16" in only("statechart: x".encode("utf-16")).message


def test_lone_surrogate_in_text(parser: str) -> None:
    assert where(only("a: b\nc: \ud800\n")) == ("yaml-syntax", 2, 4)


def test_control_character(parser: str) -> None:
    d = only("a: b\nc: d\x07\n")
    assert where(d) == ("yaml-syntax", 2, 5)
    assert "U+0007" in d.message
    assert where(only(b"a: \xc3\xa9\x00")) == ("yaml-syntax", 1, 5)


@pytest.mark.parametrize("source", ["", "# only\n\n  # comments\n", "---\n", "--- # x\n...\n"])
def test_empty_file(parser: str, source: str) -> None:
    d = only(source)
    assert where(d) == ("schema", 1, 1)
    assert d.message == "the file is empty: a statechart needs at least `statechart:` and `states:`"


@pytest.mark.parametrize(
    ("source", "line", "column", "what"),
    [("- a\n- b\n", 1, 1, "not a list"), ("# c\n\n  just text\n", 3, 3, "not the scalar")],
)
def test_top_level_must_be_a_mapping(
    parser: str, source: str, line: int, column: int, what: str
) -> None:
    d = only(source)
    assert where(d) == ("schema", line, column)
    assert d.message.startswith("the top level must be a mapping")
    assert what in d.message


def test_multiple_documents(parser: str) -> None:
    d = only("statechart: a\n---\nstatechart: b\n")
    assert where(d) == ("yaml-syntax", 2, 1)
    assert "one statechart per file" in d.message
    assert load("---\nstatechart: a\n...\n")


@pytest.mark.parametrize(
    ("source", "line", "column", "problem"),
    [
        ("statechart: x\nstates: a: b\n", 2, 10, "mapping values are not allowed"),
        ("states:\n  idle: {on: {GO: busy}\n", 3, 1, "expected ',' or '}'"),
        ("a: [1, 2\nb: 3\n", 2, 2, "expected ',' or ']'"),
        ("a:\n  - b\n - c\n", 3, 2, "expected key|expected <block end>"),  # libyaml|PyYAML
        ("a: 'unclosed\n", 2, 1, "found unexpected end of stream"),
        ("a: @x\n", 1, 4, "cannot start any token"),
    ],
)
def test_syntax_errors_point_at_the_problem(
    parser: str, source: str, line: int, column: int, problem: str
) -> None:
    d = only(source)
    assert where(d) == ("yaml-syntax", line, column)
    assert any(fragment in d.message for fragment in problem.split("|")), d.message


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [("x: [", 1, 5), ("a: 1\nb: {", 2, 5), ("a: 1\r\nb: {", 2, 5), ("x: [\n", 2, 1)],
)
def test_a_syntax_error_at_the_end_is_not_placed_past_it(
    parser: str, source: str, line: int, column: int
) -> None:
    d = only(source)
    assert where(d) == ("yaml-syntax", line, column)
    context = [note for note in d.notes if not note.startswith("hint: ")]
    assert all(f"(line {line}, column {column})" in note for note in context), d.notes


def test_syntax_error_notes_its_context(parser: str) -> None:
    d = only("states:\n  idle: {on: {GO: busy}\n")
    assert d.notes[0] == "while parsing a flow mapping (line 2, column 9)"


def test_duplicate_keys_are_all_reported_at_the_second_key(parser: str) -> None:
    source = (
        "statechart: x\n"
        "states:\n"
        "  idle:\n"
        "    on: {GO: busy}\n"
        "    on: {STOP: idle}\n"
        "  busy: {final: true, final: false}\n"
        "statechart: y\n"
    )
    root, diagnostics = load_yaml(source, F)
    assert [(where(d), d.message) for d in diagnostics] == [
        (("duplicate-key", 5, 5), "duplicate key 'on' (first defined at line 4)"),
        (("duplicate-key", 6, 23), "duplicate key 'final' (first defined at line 6)"),
        (("duplicate-key", 7, 1), "duplicate key 'statechart' (first defined at line 1)"),
    ]
    assert value(root, "statechart") == "x"  # the first occurrence is kept
    assert values(root, "states", "idle", "on") == ["busy"]
    assert value(root, "states", "busy", "final") is True


def test_same_key_in_sibling_mappings_is_fine(parser: str) -> None:
    load("a: {on: 1}\nb: {on: 2}\n")


def test_keys_that_look_different_but_read_the_same_are_duplicates(parser: str) -> None:
    [d] = problems('on: 1\n"on": 2\n')
    assert where(d) == ("duplicate-key", 2, 1)


def test_complex_key(parser: str) -> None:
    root, diagnostics = load_yaml("ok: 1\n? [a, b]\n: 2\n{c: d}: 3\n", F)
    assert [where(d) for d in diagnostics] == [("yaml-syntax", 2, 3), ("yaml-syntax", 4, 1)]
    assert "mapping key must be a scalar" in diagnostics[0].message
    assert isinstance(root, MappingNode)
    assert list(root.keys()) == ["ok"]


def test_merge_keys_are_refused(parser: str) -> None:
    [d] = problems("base: &b {x: 1}\nstate:\n  <<: *b\n  y: 2\n")
    assert where(d) == ("yaml-syntax", 3, 3)
    assert "merge keys" in d.message and "not supported" in d.message
    assert list(load("'<<': 1\n").keys()) == ["<<"]  # a quoted `<<` is an ordinary key


@pytest.mark.parametrize(
    ("tagged", "shown"),
    [
        ('!!python/object/apply:os.system ["true"]', "!!python/object/apply:os.system"),
        ("!!python/name:os.system", "!!python/name:os.system"),
        ("!!binary aGVsbG8=", "!!binary"),
        ("!!timestamp 2001-12-14", "!!timestamp"),
        ("!!set {a, b}", "!!set"),
        ("!!omap [a: 1]", "!!omap"),
        ("!custom x", "!custom"),
        ("!<tag:example.com,2000:x> y", "tag:example.com,2000:x"),
        ("!!str [1]", "!!str"),
        ("!!map [1]", "!!map"),
    ],
)
def test_tags_beyond_the_core_schema(parser: str, tagged: str, shown: str) -> None:
    root, diagnostics = load_yaml(f"ok: 1\nvalue: {tagged}\n", F)
    [d] = diagnostics
    assert where(d) == ("yaml-syntax", 2, 8)
    assert f"tag {shown} is not supported" in d.message
    node = child(root, "value")  # nothing constructed: plain nodes, the text kept as is
    assert not isinstance(node, ScalarNode) or isinstance(node.value, str)


def test_tag_directive_cannot_smuggle_a_tag(parser: str) -> None:
    [d] = problems("%TAG !! tag:evil.example,2000:\n---\na: !!str x\n")
    assert where(d) == ("yaml-syntax", 3, 4)


@pytest.mark.parametrize(
    "source", ["a: !!int abc\n", "a: !!bool yes\n", "a: !!float x\n", "a: " + "9" * 5000 + "\n"]
)
def test_invalid_typed_scalar(parser: str, source: str) -> None:
    [d] = problems(source)
    assert where(d) == ("yaml-syntax", 1, 4)
    assert "is not a valid !!" in d.message
    assert len(d.message) < 300


def test_recursive_and_undefined_aliases(parser: str) -> None:
    d = only("a: &x [1, *x]\n")
    assert where(d) == ("yaml-syntax", 1, 11)
    assert "points into its own node" in d.message
    assert where(only("a: 1\nb: *nope\n")) == ("yaml-syntax", 2, 4)
    assert load("a: &x [&x 1, *x]\n")  # the alias names the most recent anchor, now complete


def test_too_many_aliases(parser: str) -> None:
    d = only("a: &a 1\nb: [*a, *a, *a]\n", Limits(max_aliases=2))
    assert where(d) == ("yaml-limits", 2, 13)
    assert "more than 2 aliases" in d.message


BILLION_LAUGHS = "".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n',
        *(
            f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
    ]
)


def test_billion_laughs_is_refused_without_expanding(parser: str) -> None:
    d = only(BILLION_LAUGHS)
    # a: 10 nodes, b: 91, c: 820, d: 7381, e: 66430, then f: the third *e on line 6 passes
    # 250,000.
    assert where(d) == ("yaml-limits", 6, 16)
    assert "more than 250000 nodes once its aliases are expanded" in d.message


def test_expanded_size_counts_real_nodes_too(parser: str) -> None:
    d = only("a: [" + "1, " * 30 + "]\n", Limits(max_expanded_nodes=20))
    assert where(d) == ("yaml-limits", 1, 56)  # the 18th item: root, key, list, 17 items = 20


def test_50000_levels_of_flow_nesting_are_refused_before_parsing(parser: str) -> None:
    for source in ("[" * 50_000, "a: " + "{b: " * 50_000, "[" * 50_000 + "]" * 50_000):
        d = only(source)
        assert d.slug == "yaml-limits"
        assert d.span.line == 1 and 4_900 < d.span.column < 200_001
        assert "levels of nesting" in d.message


def test_the_prescan_runs_before_any_parser_sees_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parser(source: object) -> NoReturn:
        raise AssertionError("a parser saw the text")

    monkeypatch.setattr(loader, "_CParser", no_parser)
    monkeypatch.setattr(yaml, "SafeLoader", no_parser)
    assert only("[" * 50_000).slug == "yaml-limits"
    with pytest.raises(AssertionError, match="a parser saw the text"):
        load_yaml("[" * 1_000, F)


def test_flow_nesting_past_max_depth(parser: str) -> None:
    d = only("a: " + "[" * 150 + "]" * 150 + "\n")
    assert where(d) == ("yaml-limits", 1, 103)  # the root mapping is level 1
    assert d.message == "nesting deeper than 100 levels"
    assert load("a: " + "[" * 99 + "]" * 99 + "\n")


def test_deep_block_nesting_past_max_depth(parser: str) -> None:
    source = "".join("  " * i + "a:\n" for i in range(150)) + "  " * 150 + "x\n"
    assert where(only(source)) == ("yaml-limits", 101, 201)
    assert where(only(source, Limits(max_depth=10))) == ("yaml-limits", 11, 21)


def test_absurd_block_nesting_is_refused_by_the_prescan(parser: str) -> None:
    source = "statechart: x\nstates:\n" + "- " * 3_000 + "x\n"  # 3,000 nested sequences
    d = only(source)
    assert where(d) == ("yaml-limits", 3, 1)
    assert "indentation 6000 deep" in d.message
    deep_but_small = "".join(" " * i + "a:\n" for i in range(1_400))  # prefixes stay short
    assert where(only(deep_but_small)) == ("yaml-limits", 101, 101)


def test_the_deepest_allowed_nesting_loads_and_walks(parser: str) -> None:
    root = load("a: " + "[" * 450 + "]" * 450 + "\n", Limits(max_depth=500))
    assert to_plain(root) is not None  # recursive walkers stay clear of RecursionError


# --- never raises -----------------------------------------------------------


def check_contract(source: bytes | str) -> None:
    root, diagnostics = load_yaml(source, F)
    assert root is not None or diagnostics
    assert root is None or isinstance(root, MappingNode)
    for d in diagnostics:
        assert d.severity is Severity.ERROR
        assert d.span.file == F and d.span.line >= 1 and d.span.column >= 1


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(st.text())
def test_fuzz_text(parser: str, source: str) -> None:
    check_contract(source)


@FUZZ
@given(st.binary())
def test_fuzz_bytes(parser: str, source: bytes) -> None:
    check_contract(source)


YAML_BITS = st.sampled_from(
    [*":-?[]{},#&*!|>'\"%@`\t\n\r ~<", "<<", "---", "...", "&a", "*a", "!!", "\ufeff", "\x00"]
)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """VALID with a few characters inserted, deleted or replaced."""
    text = VALID
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        bit = draw(st.one_of(YAML_BITS, st.characters()))
        if action == "insert":
            text = text[:at] + bit + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        else:
            text = text[:at] + bit + text[at + 1 :]
    return text


@FUZZ
@given(mutated())
def test_fuzz_mutated_chart(parser: str, source: str) -> None:
    check_contract(source)
    check_contract(source.encode("utf-8", "surrogatepass"))

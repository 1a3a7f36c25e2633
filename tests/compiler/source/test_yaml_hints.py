"""A YAML mistake in a chart is reported where the parser finds it, with a hint that
says what to do: the table of common mistakes through `statekit.compile_chart`, with
libyaml's parser and with PyYAML's (they word their errors differently)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yaml_mistakes import MISTAKES, Mistake

import statekit
from statekit.compiler.diagnostics import CompileError, Diagnostic
from statekit.compiler.pipeline import compile_source
from statekit.compiler.source import loader


@pytest.fixture(params=["libyaml", "pure-python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run a test with libyaml's C parser and again with PyYAML's pure-Python parser."""
    if request.param == "pure-python":
        monkeypatch.setattr(loader, "_CParser", None)
    elif not yaml.__with_libyaml__:
        pytest.fail("PyYAML without libyaml: reinstall PyYAML from its wheels (they ship it)")
    yield request.param


def compile_errors(tmp_path: Path, text: str) -> tuple[Diagnostic, ...]:
    path = tmp_path / "chart.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        statekit.compile_chart(path)
    return raised.value.diagnostics


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_a_yaml_mistake_is_positioned_with_its_hint(
    parser: str, tmp_path: Path, mistake: Mistake
) -> None:
    first = compile_errors(tmp_path, mistake.text)[0]
    assert (first.slug, first.span.line, first.span.column) == (
        mistake.slug,
        mistake.line,
        mistake.column,
    ), first
    assert any(mistake.hint in line for line in (first.message, *first.notes)), first


def test_each_hint_is_one_note_after_the_parsers_context(parser: str, tmp_path: Path) -> None:
    first = compile_errors(tmp_path, "statechart: c\nstates: {idle: {on: {GO: idle}}\n")[0]
    assert first.notes[0].startswith("while parsing a flow mapping (line 2, column 9)")
    assert [note for note in first.notes if note.startswith("hint: ")] == [first.notes[-1]]


def test_an_unknown_escape_in_double_quotes(parser: str, tmp_path: Path) -> None:
    first = compile_errors(tmp_path, 'statechart: c\ndescription: "C:\\path"\n')[0]
    # libyaml points at the backslash, PyYAML at the letter after it
    column = {"libyaml": 17, "pure-python": 18}[parser]
    assert (first.slug, first.span.line, first.span.column) == ("yaml-syntax", 2, column)
    assert "hint: inside double quotes `\\` starts an escape" in first.notes[-1]


@pytest.mark.parametrize(
    "text",
    [
        "statechart: c\nstates: ]\n",  # a stray closing bracket
        "%YAML\nstatechart: c\n",  # a broken directive
    ],
)
def test_an_error_no_known_mistake_explains_gets_no_hint(
    parser: str, tmp_path: Path, text: str
) -> None:
    first = compile_errors(tmp_path, text)[0]
    assert first.slug == "yaml-syntax"
    assert not any(note.startswith("hint: ") for note in first.notes), first


REWRITTEN = {"colon-in-value", "colon-in-list-item", "colon-quoted-value-kept", "at-starts-value"}
REWRITTEN |= {"backtick-starts-value", "percent-starts-value", "brace-starts-value"}
QUOTING = [m for m in MISTAKES if m.name in REWRITTEN]


@pytest.mark.parametrize("mistake", QUOTING, ids=[m.name for m in QUOTING])
def test_the_line_a_hint_suggests_fixes_the_chart(tmp_path: Path, mistake: Mistake) -> None:
    """Written in place of the line, the suggested line is valid YAML keeping the text."""
    first = compile_errors(tmp_path, mistake.text)[0]
    hint = next(note for note in first.notes if note.startswith("hint: "))
    suggested = hint.removesuffix("`").rpartition(": `")[2]
    lines = mistake.text.splitlines(keepends=True)
    old = lines[first.span.line - 1]
    lines[first.span.line - 1] = old[: len(old) - len(old.lstrip())] + suggested + "\n"
    fixed = "".join(lines)
    path = tmp_path / "fixed.yaml"
    path.write_text(fixed, encoding="utf-8")
    try:
        statekit.compile_chart(path)
    except CompileError as error:
        assert not [d for d in error.diagnostics if d.slug == "yaml-syntax"], error.diagnostics
    key, _, written = old.strip().removeprefix("- ").partition(": ")
    value = yaml.safe_load(suggested.removeprefix("- "))[key]
    assert value == written


YAML_SIGNS = ":-'\"{}[],#&*!|>?%@`\t\n "


@st.composite
def mistakes_made_worse(draw: st.DrawFn) -> str:
    """A chart of the table with YAML's significant characters put in, taken out or cut."""
    text = draw(st.sampled_from(MISTAKES)).text
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "cut"]))
        if action == "insert":
            text = text[:at] + draw(st.text(YAML_SIGNS, min_size=1, max_size=3)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at]
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mistakes_made_worse())
def test_any_broken_chart_gets_positioned_errors_and_one_line_hints(text: str) -> None:
    libyaml = getattr(loader, "_CParser")  # noqa: B009 - private, as in test_loader
    for parser in (None, libyaml):  # PyYAML's parser, then libyaml's
        setattr(loader, "_CParser", parser)  # noqa: B010 - the module's own switch
        try:
            result = compile_source(text, "chart.yaml")
        finally:
            setattr(loader, "_CParser", libyaml)  # noqa: B010
        for d in result.diagnostics:
            assert d.span.line >= 1 and d.span.column >= 1
            hints = [note for note in d.notes if note.startswith("hint: ")]
            assert len(hints) <= 1 and all("\n" not in hint for hint in hints), d

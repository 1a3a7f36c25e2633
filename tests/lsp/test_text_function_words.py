"""The language server on the text functions: completion offers `starts_with(`,
`ends_with(` and `matches(` where an expression is written, and hover explains each."""

from __future__ import annotations

from statekit.compiler.pipeline import compile_source
from statekit.lsp.navigation import chart_document, completions, hover
from statekit.lsp.records import Position

CHART = """\
statechart: intake
events: {RECEIVED: {reference: string}}
initial: waiting
states:
  waiting:
    on:
      RECEIVED:
        - to: invoice
          if: starts_with(event.reference, 'INV-')
        - {to: review, if: "matches(event.reference, '^[A-Z]+-[0-9]+$')"}
        - {to: review, if: "ends_with(event.reference, '-X')"}
        - {to: review}
  invoice: {final: true}
  review: {final: true}
"""


def at(text: str, marker: str, offset: int = 0) -> Position:
    index = text.index(marker) + offset
    line = text.count("\n", 0, index)
    return Position(line, index - (text.rfind("\n", 0, index) + 1))


def test_the_chart_compiles() -> None:
    result = compile_source(CHART, "chart.yaml")
    assert result.chart is not None, [d.message for d in result.errors]


def _offered(typed: str) -> list[str]:
    """The labels offered with `typed` written at the end of the first guard."""
    guard = "starts_with(event.reference, 'INV-')"
    edited = CHART.replace(guard, f"{guard} and {typed}", 1)
    where = edited.index(guard) + len(f"{guard} and {typed}")
    line = edited.count("\n", 0, where)
    position = Position(line, where - (edited.rfind("\n", 0, where) + 1))
    return [item.label for item in completions(chart_document(edited), position)]


def test_completion_offers_the_text_functions_in_expressions() -> None:
    assert "starts_with(" in _offered("sta")
    assert "ends_with(" in _offered("en")
    assert "matches(" in _offered("ma")
    assert "matches(" not in _offered("sta")


def test_hover_explains_each_text_function() -> None:
    doc = chart_document(CHART)
    for word, says in (
        ("starts_with(", "begins with `prefix`"),
        ("ends_with(", "ends with `suffix`"),
        ("matches(", "RE2"),
    ):
        shown = hover(doc, at(CHART, word, 2))
        assert shown is not None and says in shown.markdown, word
        assert "`false` when `s` is null" in shown.markdown
        assert shown.range.end.character - shown.range.start.character == len(word) - 1

"""The language server on the expression language's own words: completion offers `now`,
`str(`, `format(` and duration units where an expression is written, and hover explains
`now`, `str`, `format` and a duration literal; fields in an expression with a duration
keep their navigation."""

from __future__ import annotations

from statekit.compiler.pipeline import compile_source
from statekit.lsp.navigation import chart_document, completions, hover, references
from statekit.lsp.records import Position

CHART = """\
statechart: ticket
context:
  opened_at: {type: integer, default: 0}
  key: {type: string, default: ""}
events: {OPEN: {n: integer}, REPLY: {}}
initial: new
states:
  new:
    on:
      OPEN:
        to: open
        do: [{assign: {opened_at: now, key: "format('t-{}', event.n) + str(now)"}}]
  open:
    on:
      REPLY: {to: done, if: now - ctx.opened_at <= 1h30m}
    after:
      - {at: ctx.opened_at + 2d, to: done}
  done: {final: true}
"""


def at(text: str, marker: str, offset: int = 0) -> Position:
    index = text.index(marker) + offset
    line = text.count("\n", 0, index)
    return Position(line, index - (text.rfind("\n", 0, index) + 1))


def test_the_chart_compiles() -> None:
    assert compile_source(CHART, "chart.yaml").chart is not None


def _typed(text: str, marker: str, typed: str) -> list[str]:
    """The labels offered after replacing `marker` with `typed` (cursor after it)."""
    where = text.index(marker)
    edited = text[:where] + typed + text[where + len(marker) :]
    doc = chart_document(edited)
    before = edited[:where]
    line = before.count("\n")
    position = Position(line, where - (before.rfind("\n") + 1) + len(typed))
    return [i.label for i in completions(doc, position)]


def test_completion_offers_now_str_and_format_in_expressions() -> None:
    assert "now" in _typed(CHART, "now - ctx.opened_at", "no")
    assert "str(" in _typed(CHART, "now - ctx.opened_at", "st")
    assert "format(" in _typed(CHART, "ctx.opened_at + 2d", "f")
    assert "now" not in _typed(CHART, "ctx.opened_at + 2d", "f")


def test_completion_offers_duration_units_after_digits() -> None:
    labels = _typed(CHART, "1h30m", "15")
    assert labels == ["15d", "15h", "15m", "15s", "15ms"]
    doc = chart_document(CHART.replace("1h30m", "90", 1))
    (item,) = [
        i
        for i in completions(doc, at(CHART.replace("1h30m", "90", 1), "90", 2))
        if i.label == "90m"
    ]
    assert item.detail == "duration: 5,400,000 ms"


def test_no_expression_words_outside_expressions() -> None:
    edited = CHART.replace("to: done, if", "to: no, if", 1)
    doc = chart_document(edited)
    labels = [i.label for i in completions(doc, at(edited, "to: no", 6))]
    assert "now" not in labels and "str(" not in labels


def test_hover_explains_now_str_format_and_durations() -> None:
    doc = chart_document(CHART)
    now = hover(doc, at(CHART, "now - ctx", 1))
    assert now is not None and "clock reading" in now.markdown
    assert now.range.end.character - now.range.start.character == 3
    text = hover(doc, at(CHART, "str(now)", 1))
    assert text is not None and "`true` or" in text.markdown
    template = hover(doc, at(CHART, "format(", 2))
    assert template is not None and "{{" in template.markdown
    duration = hover(doc, at(CHART, "1h30m", 2))
    assert duration is not None and "5,400,000" in duration.markdown
    days = hover(doc, at(CHART, "2d, to", 0))
    assert days is not None and "172,800,000" in days.markdown
    assert hover(doc, at(CHART, "t-{}", 0)) is None  # inside a string literal


def test_fields_next_to_durations_keep_their_references() -> None:
    doc = chart_document(CHART)
    uses = references(doc, at(CHART, "opened_at: {type", 0))
    lines = sorted(r.start.line for r in uses)
    assert len(lines) == 4  # declared, assigned, read next to 1h30m, read next to 2d

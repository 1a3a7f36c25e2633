"""The docs page documents a chart's `define:` and `tables:` (through `statekit docs`, read
with markdown-it): each definition's expression and inferred type, each table's key,
value type, entries as written (durations as `3d`), default and description, escaped like
the rest of the page; a chart with neither has neither section."""

from __future__ import annotations

from pathlib import Path

from cli_process import statekit
from markdown_it import MarkdownIt

CHART = """\
statechart: ticket
version: 1
context:
  priority: {enum: [low, normal, high], default: normal}
  opened_at: {type: integer, default: 0}
  region: {type: string, default: ""}
events: {SOLVED: {}}
define:
  budget: "tables.sla[ctx.priority]"
  late: "now - ctx.opened_at > budget"
tables:
  sla:
    key: ctx.priority
    value: duration
    description: "Resolution *target* | per <b>priority</b>"
    entries: {low: 3d, normal: 1d, high: 1h30m}
  desk:
    key: string
    value: string
    entries: {eu: "Dublin | IE", us: "Austin"}
    default: "*anywhere*"
initial: open
states:
  open:
    after: [{id: sla, delay: budget, to: breached}]
    on: {SOLVED: {to: solved, if: "not late"}}
  breached: {final: true}
  solved: {final: true}
"""


def _sections(page: str) -> dict[str, list[list[str]]]:
    """Each heading's table rows (header first) and paragraphs, as rendered text."""
    out: dict[str, list[list[str]]] = {}
    current: list[list[str]] = []
    row: list[str] | None = None
    tokens = MarkdownIt("commonmark").enable("table").parse(page)
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            current = out.setdefault(tokens[i + 1].content, [])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            current.append(row)
            row = None
        elif token.type == "inline" and row is not None:
            row.append("".join(c.content for c in token.children or ()))
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            current.append(["".join(c.content for c in token.children or ())])
    return out


def _page(tmp_path: Path, text: str, name: str) -> tuple[str, dict[str, list[list[str]]]]:
    (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    done = statekit("docs", f"{name}.yaml", "-o", "site", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: no Graphviz for the SVGs
    page = (tmp_path / "site" / f"{name}.md").read_text(encoding="utf-8")
    return page, _sections(page)


def test_the_page_lists_definitions_with_their_types(tmp_path: Path) -> None:
    _, page = _page(tmp_path, CHART, "ticket")
    assert page["Definitions"] == [
        ["name", "expression", "type"],
        ["budget", "tables.sla[ctx.priority]", "integer"],
        ["late", "now - ctx.opened_at > budget", "boolean"],
    ]


def test_the_page_lists_tables_with_entries_as_written(tmp_path: Path) -> None:
    _, page = _page(tmp_path, CHART, "ticket")
    assert page["sla"] == [
        ["Key: ctx.priority · value: duration · default: none"],
        ["Resolution *target* | per <b>priority</b>"],
        ["key", "value"],
        ["low", "3d"],
        ["normal", "1d"],
        ["high", "1h30m"],
    ]
    assert page["desk"] == [
        ["Key: string · value: string · default: '*anywhere*'"],
        ["key", "value"],
        ["eu", "'Dublin | IE'"],
        ["us", "'Austin'"],
    ]


def test_chart_text_in_the_sections_is_escaped(tmp_path: Path) -> None:
    raw, _ = _page(tmp_path, CHART, "ticket")
    section = raw[raw.index("## Tables") :]
    assert "Resolution \\*target\\* \\| per &lt;b>priority&lt;/b>" in section
    html = MarkdownIt("commonmark").enable("table").render(section)
    assert "<b>" not in html and "<em>" not in html


def test_a_chart_without_definitions_or_tables_has_neither_section(tmp_path: Path) -> None:
    plain = "statechart: plain\ninitial: a\nstates: {a: {final: true}}\n"
    raw, page = _page(tmp_path, plain, "plain")
    assert "Definitions" not in page and "Tables" not in page
    assert "## Definitions" not in raw and "## Tables" not in raw

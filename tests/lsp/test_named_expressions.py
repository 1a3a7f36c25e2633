"""Definitions (`define:`) and tables (`tables:`) in the language server, over its wire
protocol: completion of definition names, `tables.<name>` and table keys; hover on a
definition's use (its expression and type) and on a table read (its entries); go-to-
definition; rename of a definition and of a table across the chart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_client import ServerFailed
from lsp_session import Editor, Json

CHART = """\
statechart: ticket
context:
  priority: {enum: [low, normal, urgent], default: normal}
  retries: {type: integer, default: 0}
  queue: {type: string, default: ""}
events: {FAIL: {}, ROUTE: {team: string}}
define:
  limit: "tables.max_retries[ctx.priority]"
  exhausted: "ctx.retries >= limit"
tables:
  max_retries:
    key: ctx.priority
    value: integer
    entries: {low: 5, normal: 3, urgent: 1}
  team_queue:
    key: string
    value: string
    entries: {billing: finance, outage: ops}
    default: support
initial: open
states:
  open:
    on:
      FAIL:
        - {to: closed, if: "exhausted"}
        - {to: open, do: [{assign: {retries: "ctx.retries + 1"}}]}
      ROUTE: {to: open, do: [{assign: {queue: "tables.team_queue[event.team]"}}]}
  closed:
    final: true
    entry: [{emit: {type: Closed, payload: {limit: "limit", tries: "tables.max_retries['low']"}}}]
"""


def _find(text: str, marker: str, offset: int | None = None, nth: int = 0) -> Json:
    index = -1
    for _ in range(nth + 1):
        index = text.index(marker, index + 1)
    index += len(marker) if offset is None else offset
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def _applied(text: str, edits: list[Json]) -> str:
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(p: Json) -> int:
        return starts[int(p["line"])] + int(p["character"])

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        rng = edit["range"]
        text = text[: offset(rng["start"])] + edit["newText"] + text[offset(rng["end"]) :]
    return text


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("named"))
    yield session
    session.close()


@pytest.fixture
def uri(editor: Editor, tmp_path: Path) -> Iterator[str]:
    opened = editor.open(tmp_path / "ticket.yaml", CHART)
    assert editor.published(opened, 1) == []  # the chart compiles clean
    yield opened
    editor.close_document(opened)
    editor.published(opened)


def _labels(editor: Editor, uri: str, text: str, position: Json) -> list[str]:
    opened = editor.open(Path(uri.removeprefix("file://")).with_name("typing.yaml"), text)
    found = editor.request("textDocument/completion", opened, position=position)
    editor.close_document(opened)
    return sorted(item["label"] for item in found["items"])


def test_a_bare_word_completes_definitions_and_tables(editor: Editor, uri: str) -> None:
    text = CHART.replace('if: "exhausted"', 'if: "exh"')
    labels = _labels(editor, uri, text, _find(text, 'if: "exh'))
    assert {"exhausted", "limit", "tables.max_retries", "tables.team_queue"} <= set(labels)
    assert "ctx.retries" in labels  # the fields, as before


def test_after_tables_dot_the_table_names_complete(editor: Editor, uri: str) -> None:
    text = CHART.replace("tables.team_queue[event.team]", "tables.t")
    labels = _labels(editor, uri, text, _find(text, "tables.t"))
    assert labels == ["max_retries", "team_queue"]


def test_inside_a_table_read_its_keys_complete(editor: Editor, uri: str) -> None:
    text = CHART.replace("tables.max_retries['low']", "tables.max_retries[")
    labels = _labels(editor, uri, text, _find(text, "tables.max_retries[", nth=1))
    assert labels == ["'low'", "'normal'", "'urgent'"]
    quoted = CHART.replace("tables.max_retries['low']", "tables.team_queue['")
    labels = _labels(editor, uri, quoted, _find(quoted, "tables.team_queue['"))
    assert labels == ["billing", "outage"]


def test_hover_on_a_definitions_use_shows_its_expression_and_type(editor: Editor, uri: str) -> None:
    hovered = editor.request("textDocument/hover", uri, position=_find(CHART, 'if: "exh'))
    text = hovered["contents"]["value"]
    assert "**definition** `exhausted`: boolean" in text and "ctx.retries >= limit" in text


def test_hover_on_a_table_read_shows_its_entries(editor: Editor, uri: str) -> None:
    hovered = editor.request("textDocument/hover", uri, position=_find(CHART, "tables.team_q"))
    text = hovered["contents"]["value"]
    assert "**table** `tables.team_queue`: string → string" in text, text
    assert "`'billing'`: `'finance'`" in text and "default: `'support'`" in text


def test_hover_on_a_duration_table_shows_its_entries_as_durations(editor: Editor, uri: str) -> None:
    text = CHART.replace(
        "initial: open\n",
        "  sla:\n    key: string\n    value: duration\n"
        "    entries: {low: 3d, normal: 1d12h}\n    default: 90m\n"
        "initial: open\n",
    ).replace(
        "    on:\n      FAIL:",
        '    after: [{delay: "tables.sla[ctx.queue]", to: closed}]\n    on:\n      FAIL:',
    )
    opened = editor.open(Path(uri.removeprefix("file://")).with_name("durations.yaml"), text)
    assert editor.published(opened, 1) == []
    hovered = editor.request("textDocument/hover", opened, position=_find(text, "tables.sl"))
    editor.close_document(opened)
    shown = hovered["contents"]["value"]
    assert "**table** `tables.sla`: string → duration" in shown, shown
    assert "- `'low'`: `3d`\n- `'normal'`: `1d12h`\ndefault: `1h30m`" in shown, shown


def test_definition_of_a_use_is_its_declaration(editor: Editor, uri: str) -> None:
    found = editor.request("textDocument/definition", uri, position=_find(CHART, 'limit: "l', 10))
    assert found[0]["range"]["start"] == _find(CHART, "  limit:", 2)


@pytest.mark.parametrize(
    ("marker", "offset", "new_name", "renamed"),
    [
        ('if: "exh', 6, "out_of_tries", ('  out_of_tries: "ctx', 'if: "out_of_tries"')),
        (">= limit", 4, "ceiling", ('  ceiling: "tables', '>= ceiling"', 'limit: "ceiling"')),
        ("tables.max_r", 8, "retry_budget", ("  retry_budget:", "tables.retry_budget[ctx",
                                              "tables.retry_budget['low']")),
    ],
    ids=["definition", "definition-used-twice", "table"],
)  # fmt: skip
def test_a_rename_rewrites_the_declaration_and_every_use(
    editor: Editor, uri: str, marker: str, offset: int, new_name: str, renamed: tuple[str, ...]
) -> None:
    position = _find(CHART, marker, offset)
    edits = editor.request("textDocument/rename", uri, position=position, newName=new_name)
    after = _applied(CHART, edits["changes"][uri])
    for expected in renamed:
        assert expected in after, after
    old = {"out_of_tries": "exhausted", "ceiling": "limit", "retry_budget": "max_retries"}[new_name]
    remaining = after.replace("limit: ", "")  # the emitted payload's own key stays
    assert old not in remaining, after


@pytest.mark.parametrize(
    ("new_name", "why"),
    [("ctx", "belongs to the expression language"), ("a-b", "letters, digits and '_'"),
     ("limit", "already exists")],
)  # fmt: skip
def test_a_definition_rename_is_refused_for_names_an_expression_cannot_use(
    editor: Editor, uri: str, new_name: str, why: str
) -> None:
    with pytest.raises(ServerFailed, match=why):
        editor.request(
            "textDocument/rename", uri, position=_find(CHART, 'if: "exh'), newName=new_name
        )


def test_the_outline_lists_definitions_and_tables(editor: Editor, uri: str) -> None:
    symbols = editor.request("textDocument/documentSymbol", uri)
    named = [(s["name"], s["detail"]) for s in symbols if s["detail"] in ("definition", "table")]
    assert named == [
        ("limit", "definition"),
        ("exhausted", "definition"),
        ("max_retries", "table"),
        ("team_queue", "table"),
    ]

"""`pause:` and `resume:` in the language server, over its wire protocol: completion of
the names they take (named `after` timers, then delayed sends' ids), hover and
go-to-definition on a named timer's use, rename of a timer's `id:` rewriting its
pause and resume uses, and the compiler's `unknown-timer-id` with its hint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_session import Editor, Json

CHART = """\
statechart: ticket
events: {WAIT: {}, BACK: {}, NUDGE: {}}
initial: open
states:
  open:
    after: [{id: sla, delay: 4h, to: breached}]
    initial: working
    states:
      working: {on: {WAIT: waiting}}
      waiting:
        entry: [{pause: sla}, {send: {event: NUDGE, delay: 1d, id: nudge}}]
        exit: [{resume: sla}, {cancel: nudge}]
        on: {BACK: working, NUDGE: {do: [{pause: nudge}]}}
  breached: {final: true}
"""
SLA = "after(sla)@open"


def _find(text: str, marker: str, offset: int | None = None) -> Json:
    index = text.index(marker) + (len(marker) if offset is None else offset)
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def _range(text: str, marker: str, offset: int, length: int) -> Json:
    start = _find(text, marker, offset)
    return {
        "start": start,
        "end": {"line": start["line"], "character": start["character"] + length},
    }


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("controls"))
    yield session
    session.close()


@pytest.fixture
def uri(editor: Editor, tmp_path: Path) -> Iterator[str]:
    opened = editor.open(tmp_path / "ticket.yaml", CHART)
    assert editor.published(opened, 1) == []  # the chart compiles clean
    yield opened
    editor.close_document(opened)
    editor.published(opened)


@pytest.mark.parametrize("marker", ["{pause: ", "{resume: "])
def test_completion_after_pause_and_resume_offers_the_timer_names(
    editor: Editor, uri: str, marker: str
) -> None:
    found = editor.request("textDocument/completion", uri, position=_find(CHART, marker))
    items = [(item["label"], item.get("detail", "")) for item in found["items"]]
    assert [label for label, _ in items] == ["sla", "nudge"]
    assert SLA in items[0][1] and "delayed send" in items[1][1]


def test_hover_and_definition_on_a_pause_name_show_its_timer(editor: Editor, uri: str) -> None:
    for marker in ("{pause: ", "{resume: "):
        position = _find(CHART, marker, len(marker) + 1)
        hovered = editor.request("textDocument/hover", uri, position=position)
        text = hovered["contents"]["value"]
        assert SLA in text and "after 4h" in text and "breached" in text, text
        found = editor.request("textDocument/definition", uri, position=position)
        assert found == [{"uri": uri, "range": _range(CHART, "{id: sla", 5, 3)}]


def test_renaming_a_timer_id_renames_its_pause_and_resume_uses(editor: Editor, uri: str) -> None:
    at_pause = _find(CHART, "{pause: ", 9)
    renamed = editor.request("textDocument/rename", uri, position=at_pause, newName="resolution")
    edits = renamed["changes"][uri]
    assert [e["newText"] for e in edits] == ["resolution"] * 3
    assert [e["range"] for e in edits] == [
        _range(CHART, "{id: sla", 5, 3),
        _range(CHART, "{pause: sla", 8, 3),
        _range(CHART, "{resume: sla", 9, 3),
    ]  # not `pause: nudge`: another timer's name


def test_an_unknown_name_is_reported_with_the_closest_timer(editor: Editor, tmp_path: Path) -> None:
    text = CHART.replace("{resume: sla}", "{resume: slq}")
    opened = editor.open(tmp_path / "typo.yaml", text)
    found = editor.published(opened, 1)
    editor.close_document(opened)
    assert [d["code"] for d in found] == ["unknown-timer-id"], found
    assert found[0]["range"]["start"] == _find(text, "{resume: ")
    assert "did you mean 'sla'?" in found[0]["message"] + str(found[0].get("relatedInformation"))

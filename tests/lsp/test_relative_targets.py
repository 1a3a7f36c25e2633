"""Relative state references in the language server, over the real `statekit lsp`: a
target's definition, its completion from its source state, and rename."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_session import Editor, Json

from statekit.compiler.pipeline import compile_source

TICKET = """\
statechart: ticket
events: {AGENT_REPLIED: {}, SOLVED: {}}
parallel: true
states:
  first_response:
    initial: pending
    states:
      pending:
        on: {AGENT_REPLIED: met}
      met: {}
  resolution:
    initial: .pending
    states:
      pending:
        on: {SOLVED: met}
      waiting:
        initial: customer
        states:
          customer:
            on: {AGENT_REPLIED: ^^pending, SOLVED: .nothing}
      met: {}
      h: {history: shallow, default: waiting}
"""
FIXED = TICKET.replace("SOLVED: .nothing", "SOLVED: ^^met")


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("relative"))
    yield session
    session.close()


def _find(text: str, marker: str, offset: int) -> Json:
    index = text.index(marker) + offset
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def _line_of(text: str, marker: str) -> int:
    return text.count("\n", 0, text.index(marker))


def _apply(text: str, edits: list[Json]) -> str:
    lines = text.split("\n")
    for edit in sorted(
        edits,
        key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
        reverse=True,
    ):
        start, end = edit["range"]["start"], edit["range"]["end"]
        assert start["line"] == end["line"]
        row = lines[start["line"]]
        lines[start["line"]] = row[: start["character"]] + edit["newText"] + row[end["character"] :]
    return "\n".join(lines)


def _targets(text: str) -> dict[tuple[str, str], str]:
    result = compile_source(text, "ticket.yaml")
    assert result.chart is not None, result.diagnostics
    chart = result.chart
    paths = {s.id: s.path for s in chart.states}
    targets = {
        (paths[t.source], str(t.event)): ",".join(paths[i] for i in t.targets)
        for t in chart.transitions
    }
    initials = {(s.path, "initial"): ",".join(paths[i] for i in s.initial) for s in chart.states}
    return {**targets, **initials}


def _open(editor: Editor, tmp_path: Path, text: str) -> str:
    uri = editor.open(tmp_path / "ticket.yaml", text)
    return uri


def test_the_server_reports_what_the_compiler_does_for_relative_targets(
    editor: Editor, tmp_path: Path
) -> None:
    uri = _open(editor, tmp_path, TICKET)
    published = editor.published(uri, 1)
    assert [(d["code"], d["message"]) for d in published] == [
        (
            "unknown-state",
            "'.nothing' from 'resolution.waiting.customer' names "
            "'resolution.waiting.customer.nothing', which is not a state\n"
            "'.name' names a child of the state, '^name' a sibling, and '^^name' a sibling "
            "of its parent.",
        )
    ]
    version = editor.replace(uri, FIXED)
    assert editor.published(uri, version) == []
    editor.close_document(uri)
    editor.published(uri)


@pytest.mark.parametrize(
    ("marker", "offset", "declared"),
    [
        ("{AGENT_REPLIED: met}", 16, "first_response:"),  # sibling in the first region
        ("{SOLVED: met}", 9, "resolution:"),  # sibling in the second region
        ("^^pending", 2, "resolution:"),  # explicit, two levels up
        ("^^met", 2, "resolution:"),
        ("default: waiting", 9, "resolution:"),  # a history default, from the history state
    ],
)
def test_definition_and_hover_of_a_relative_target(
    editor: Editor, tmp_path: Path, marker: str, offset: int, declared: str
) -> None:
    uri = _open(editor, tmp_path, FIXED)
    editor.published(uri, 1)
    found = editor.request("textDocument/definition", uri, position=_find(FIXED, marker, offset))
    name = FIXED[FIXED.index(marker) + offset :].split("}")[0].split(",")[0].lstrip("^.")
    hovered = editor.request("textDocument/hover", uri, position=_find(FIXED, marker, offset))
    assert hovered["contents"]["value"].startswith(f"**state** `{declared[:-1]}.{name}`")
    region_start = FIXED.index(declared)
    declaration = FIXED.index(f"      {name}:", region_start) + 6
    line = FIXED.count("\n", 0, declaration)
    character = declaration - (FIXED.rfind("\n", 0, declaration) + 1)
    assert found == [
        {
            "uri": uri,
            "range": {
                "start": {"line": line, "character": character},
                "end": {"line": line, "character": character + len(name)},
            },
        }
    ]
    editor.close_document(uri)
    editor.published(uri)


def test_completion_at_a_target_offers_the_names_it_can_use_from_there(
    editor: Editor, tmp_path: Path
) -> None:
    uri = _open(editor, tmp_path, FIXED)
    editor.published(uri, 1)
    where = _find(FIXED, "{AGENT_REPLIED: met}", 16)
    completion = editor.request("textDocument/completion", uri, position=where)
    offered = {item["detail"]: item["label"] for item in completion["items"]}
    assert offered["first_response.met"] == "met"  # the sibling, by its bare name
    assert offered["resolution.met"] == "resolution.met"
    assert offered["first_response.pending"] == "pending"
    assert offered["resolution.waiting.customer"] == "customer"
    # every label offered names its state from there
    for path, label in offered.items():
        text = FIXED.replace("{AGENT_REPLIED: met}", f"{{AGENT_REPLIED: '{label}'}}")
        if path.endswith(".h"):
            continue  # a history state is a target too, but not one to check here
        assert _targets(text)[("first_response.pending", "AGENT_REPLIED")] == path
    # where an explicit form is typed, the explicit forms are offered
    explicit = editor.request(
        "textDocument/completion", uri, position=_find(FIXED, "^^met", len("^^met"))
    )
    forms = {item["detail"]: item["label"] for item in explicit["items"]}
    assert forms["resolution.met"] == "^^met"
    assert forms["resolution.waiting"] == "^^waiting"  # its parent
    assert forms["resolution.waiting.customer"] == "^customer"  # itself
    assert forms["first_response.met"] == "^^^first_response.met"
    editor.close_document(uri)
    editor.published(uri)


@pytest.mark.parametrize(
    ("marker", "offset", "new_name"),
    [
        ("      met: {}\n      h:", 6, "answered"),  # resolution.met: `met` and `^^met`
        ("  resolution:", 2, "solving"),  # an ancestor: explicit forms stay as written
        ("      waiting:", 6, "on_customer"),  # the history default follows
        ("      met: {}\n  resolution", 6, "waiting"),  # the name of a state elsewhere
        ("      pending:\n        on: {SOLVED", 6, "open"),  # `initial: .pending`, `^^pending`
    ],
)
def test_rename_keeps_every_relative_target_naming_the_same_state(
    editor: Editor, tmp_path: Path, marker: str, offset: int, new_name: str
) -> None:
    uri = _open(editor, tmp_path, FIXED)
    editor.published(uri, 1)
    position = _find(FIXED, marker, offset)
    renamed_edit = editor.request("textDocument/rename", uri, position=position, newName=new_name)
    editor.close_document(uri)
    editor.published(uri)
    if renamed_edit is None:
        pytest.fail("no edits")
    renamed = _apply(FIXED, renamed_edit["changes"][uri])
    old_name = FIXED[FIXED.index(marker) + offset :].split(":")[0]
    old_path = {
        "answered": "resolution.met",
        "solving": "resolution",
        "on_customer": "resolution.waiting",
        "waiting": "first_response.met",
        "open": "resolution.pending",
    }[new_name]
    new_path = old_path[: len(old_path) - len(old_name)] + new_name

    def moved(path: str) -> str:
        if path == old_path or path.startswith(old_path + "."):
            return new_path + path[len(old_path) :]
        return path

    before = _targets(FIXED)
    after = _targets(renamed)
    if new_name == "open":
        assert "initial: .open" in renamed and "^^open" in renamed
    assert after == {
        (moved(s), e): ",".join(moved(p) for p in t.split(",") if p) for (s, e), t in before.items()
    }


SHADOW = """\
statechart: shadow
events: {GO: {}}
initial: a
states:
  a:
    initial: b
    states:
      b:
        initial: c
        states:
          c: {on: {GO: x}}
          d: {}
      x: {}
"""


def test_rename_lengthens_a_target_a_nearer_new_name_would_capture(
    editor: Editor, tmp_path: Path
) -> None:
    # `x` from a.b.c names a.x (found two levels out); renaming a.b.d to x puts an
    # `x` among c's siblings, so the target is lengthened to keep naming a.x
    uri = editor.open(tmp_path / "shadow.yaml", SHADOW)
    editor.published(uri, 1)
    position = _find(SHADOW, "          d:", 10)
    renamed_edit = editor.request("textDocument/rename", uri, position=position, newName="x")
    editor.close_document(uri)
    editor.published(uri)
    renamed = _apply(SHADOW, renamed_edit["changes"][uri])
    assert renamed == SHADOW.replace("{GO: x}", "{GO: a.x}").replace("d: {}", "x: {}")
    assert _targets(renamed)[("a.b.c", "GO")] == "a.x"

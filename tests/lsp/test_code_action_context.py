"""Code actions answer for the findings the client names in its context, not for every
finding on the line (several findings often share one key: a state's unclassified events)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_session import Editor, Json

PAIRS = """\
statechart: pairs
events:
  GO: {}
  PAY: {}
  SHIP: {}
initial: idle
states:
  idle:
    on: {GO: busy, PAY: busy, SHIP: busy}
  busy:
    on: {GO: idle}
"""


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("actions"))
    yield session
    session.close()


def _findings(editor: Editor, path: Path) -> tuple[str, list[Json]]:
    uri = editor.open(path, PAIRS)
    editor.published(uri, 1)
    found = [d for d in editor.analysed(uri) if d["code"] == "undefined-pair"]
    assert sorted(d["message"].split()[1] for d in found) == ["PAY", "SHIP"]
    assert found[0]["range"] == found[1]["range"]  # both at the `busy:` key
    return uri, found


def _actions(editor: Editor, uri: str, line: int, named: list[Json]) -> list[Json]:
    cursor = {"line": line, "character": 0}
    actions: list[Json] = editor.request(
        "textDocument/codeAction",
        uri,
        range={"start": cursor, "end": cursor},
        context={"diagnostics": named},
    )
    return actions


@pytest.mark.parametrize("event", ["PAY", "SHIP"])
def test_a_named_finding_gets_its_own_fixes_only(
    editor: Editor, tmp_path: Path, event: str
) -> None:
    uri, found = _findings(editor, tmp_path / f"{event}.yaml")
    named = [d for d in found if d["message"].split()[1] == event]
    other = "SHIP" if event == "PAY" else "PAY"
    actions = _actions(editor, uri, named[0]["range"]["start"]["line"], named)
    assert actions
    assert all(event in a["title"] and other not in a["title"] for a in actions)
    assert all(a["diagnostics"] == named for a in actions)


def test_no_named_finding_gets_every_fix_on_the_line(editor: Editor, tmp_path: Path) -> None:
    uri, found = _findings(editor, tmp_path / "none.yaml")
    line = found[0]["range"]["start"]["line"]
    everything = _actions(editor, uri, line, [])
    titles = " ".join(a["title"] for a in everything)
    assert "PAY" in titles and "SHIP" in titles
    # a diagnostic of another tool names none of statekit's: the same as naming none
    foreign = {**found[0], "source": "yaml", "code": "other", "message": "something else"}
    assert _actions(editor, uri, line, [foreign]) == everything
    both = _actions(editor, uri, line, found)
    assert sorted(a["title"] for a in both) == sorted(a["title"] for a in everything)
    for action in both:  # each names the one finding it fixes
        assert [d["message"].split()[1] for d in action["diagnostics"]] == [
            e for e in ("PAY", "SHIP") if e in action["title"]
        ]

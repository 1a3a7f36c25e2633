"""The language server publishes a YAML mistake at its position with the hint as related
information, for the table of common mistakes (one real server, each chart opened)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_session import Editor
from yaml_mistakes import MISTAKES, Mistake


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("workspace"))
    yield session
    session.close()


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_a_yaml_mistake_is_published_with_its_hint(
    editor: Editor, tmp_path: Path, mistake: Mistake
) -> None:
    uri = editor.open(tmp_path / f"{mistake.name}.yaml", mistake.text)
    published = editor.published(uri, 1)
    editor.close_document(uri)
    editor.published(uri)
    # LSP positions are 0-based; the table's columns are ASCII, so UTF-16 agrees.
    start = {"line": mistake.line - 1, "character": mistake.column - 1}
    found = [d for d in published if d["code"] == mistake.slug and d["range"]["start"] == start]
    assert len(found) == 1, published
    related = [r["message"] for r in found[0].get("relatedInformation") or []]
    assert any(mistake.hint in text for text in (found[0]["message"], *related)), found[0]

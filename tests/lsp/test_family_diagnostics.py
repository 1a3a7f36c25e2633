"""The editor sees the family rules: a chart open in `statekit lsp` is linted with the
charts of its folder (as saved), and the findings come with their quick fixes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_session import Editor, Json
from order_payment_family import ORDER, position, write_family

FAMILY = {"invoke-unknown-chart", "invoke-input", "invoke-output", "invoke-unclassified"}


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("family"))
    yield session
    session.close()


def _analysed(editor: Editor, path: Path, text: str) -> list[Json]:
    uri = editor.open(path, text)
    editor.published(uri, 1)
    return [d for d in editor.analysed(uri) if d["code"] in FAMILY]


def test_a_chart_whose_child_is_in_its_folder_has_no_family_finding(
    editor: Editor, tmp_path: Path
) -> None:
    folder = write_family(tmp_path)
    assert _analysed(editor, folder / "order.yaml", ORDER) == []


def test_a_misspelt_child_is_reported_with_a_fix(editor: Editor, tmp_path: Path) -> None:
    folder = write_family(tmp_path)
    text = ORDER.replace("chart: payment", "chart: paymnet")
    uri_path = folder / "order.yaml"
    (found,) = _analysed(editor, uri_path, text)
    line, column = position(text, "paymnet")
    assert found["code"] == "invoke-unknown-chart"
    assert found["range"]["start"] == {"line": line - 1, "character": column - 1}
    uri = uri_path.as_uri()
    actions = editor.request(
        "textDocument/codeAction",
        uri,
        range=found["range"],
        context={"diagnostics": [found]},
    )
    edits = [e for a in actions for e in a["edit"]["changes"][uri]]
    assert {e["newText"] for e in edits} == {"payment"}


def test_an_unclassified_error_invoke_gets_a_reject_fix(editor: Editor, tmp_path: Path) -> None:
    folder = write_family(tmp_path)
    text = ORDER.replace("      error.invoke.payment: failed\n", "")
    (found,) = _analysed(editor, folder / "order.yaml", text)
    assert found["code"] == "invoke-unclassified"
    uri = (folder / "order.yaml").as_uri()
    actions = editor.request(
        "textDocument/codeAction", uri, range=found["range"], context={"diagnostics": [found]}
    )
    assert any(a["title"].startswith("Reject error.invoke.payment in 'paying'") for a in actions)

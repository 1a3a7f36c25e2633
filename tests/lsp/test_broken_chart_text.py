"""Hover and completion while a chart has errors (the normal state while typing) show
values, never Python reprs of the YAML tree (`ScalarNode(value=..., span=SourceSpan(...))`).

For every class of error the compiler reports there is a broken chart
(`broken_charts.BROKEN`, each checked to report its class), and the real server
is asked for hover and completion at every place where the answer can change:
the start and end of every token of every line, the line's end, and a fixed-seed
sample of other positions.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from broken_charts import BASE, BROKEN
from lsp_session import Editor, Json

from statekit.compiler.pipeline import compile_source

REPR = re.compile(
    r"ScalarNode\(|SequenceNode\(|MappingNode\(|SourceSpan\(|TraceStep\(|Diagnostic\("
    r"|<[\w.]+ object at 0x|\bobject at 0x[0-9a-f]+"
)
"""What a Python repr of statekit's records or of any object looks like."""
SEED = 30
EXTRA_POSITIONS_PER_LINE = 3
CHARTS = {"valid": BASE, **BROKEN}


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("broken"))
    yield session
    session.close()


def test_each_broken_chart_reports_its_error_class() -> None:
    for slug, text in BROKEN.items():
        found = {d.slug for d in compile_source(text, "c.yaml").diagnostics}
        assert slug in found, (slug, found)
    assert compile_source(BASE, "c.yaml").diagnostics == ()


def positions(text: str, seed: int) -> Iterator[tuple[int, int]]:
    """Token starts and ends, line ends, and a seeded sample of other columns."""
    rng = random.Random(seed)
    for number, line in enumerate(text.split("\n")):
        columns = {0, len(line)}
        for token in re.finditer(r"[\w.\-]+|[^\w\s]", line):
            columns.update((token.start(), token.end()))
        columns.update(rng.randrange(len(line) + 1) for _ in range(EXTRA_POSITIONS_PER_LINE))
        for column in sorted(columns):
            yield number, column


def texts_of(hover: Json | None, completion: Json | None) -> Iterator[str]:
    if hover:
        contents = hover["contents"]
        yield contents["value"] if isinstance(contents, dict) else str(contents)
    items = (completion or {}).get("items", []) if isinstance(completion, dict) else completion
    for item in items or []:
        yield item["label"]
        yield item.get("detail") or ""
        documentation = item.get("documentation") or ""
        yield documentation["value"] if isinstance(documentation, dict) else documentation


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_hover_and_completion_never_show_a_repr(editor: Editor, tmp_path: Path, name: str) -> None:
    text = CHARTS[name]
    uri = editor.open(tmp_path / f"{name}.yaml", text)
    editor.published(uri, 1)  # compiled: the answers are of this text
    leaks: list[str] = []
    hovered = 0
    for line, character in positions(text, SEED):
        where = {"line": line, "character": character}
        hover = editor.request("textDocument/hover", uri, position=where)
        completion = editor.request("textDocument/completion", uri, position=where)
        hovered += bool(hover)
        for shown in texts_of(hover, completion):
            if REPR.search(shown):
                leaks.append(f"{line + 1}:{character + 1}: {shown[:200]!r}")
    editor.close_document(uri)
    assert leaks == []
    if name not in ("yaml-syntax", "duplicate-key", "yaml-limits"):
        assert hovered > 50  # the family hovers names, not only blanks

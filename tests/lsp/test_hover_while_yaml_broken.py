"""Hover, definition and references keep answering on the intact parts of a chart whose
YAML does not parse (the normal state while typing a new line).

The family: after each line of a chart, a line broken in each way typing leaves one
(a key without its colon, an unclosed `{`, a key indented one column too deep or too
shallow), opened in the real server; every name on every other line must hover as it
does on the intact chart (made not to compile, so that neither answer has the IR's
extras), at the same place shifted by the inserted line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from broken_charts import BASE
from lsp_client import ServerFailed
from lsp_session import Editor, Json

from statekit.compiler.pipeline import compile_source

NOT_COMPILING = "\nnot_a_chart_key: 1\n"
"""Appended to every text: a schema error, so that no text of the family compiles."""
NAME = re.compile(r"[A-Za-z_]\w*")
LINES = (BASE + NOT_COMPILING).split("\n")


def broken_lines(line: str) -> Iterator[tuple[str, str]]:
    """The ways of breaking YAML on a new line typed under `line`."""
    indent = len(line) - len(line.lstrip()) if line.strip() else 0
    yield "key without colon", " " * indent + "PA"
    yield "unclosed brace", " " * indent + "SCAN: {to: "
    yield "one column deeper", " " * (indent + 1) + "oops: 1"
    yield "one column shallower", " " * max(indent - 1, 0) + "oops: 1"


def family() -> Iterator[tuple[int, str, str]]:
    for after, line in enumerate(LINES[:-2]):
        for kind, typed in broken_lines(line):
            text = "\n".join([*LINES[: after + 1], typed, *LINES[after + 1 :]])
            slugs = {d.slug for d in compile_source(text, "c.yaml").diagnostics}
            if "yaml-syntax" in slugs:
                yield after, kind, text


FAMILY = list(family())


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("yaml-broken"))
    yield session
    session.close()


def _shifted(answer: Json | None, after: int) -> Json | None:
    """A hover of the intact text as it reads with a line inserted below line `after`."""
    if answer is None:
        return None
    moved = {**answer, "range": {k: dict(v) for k, v in answer["range"].items()}}
    for end in moved["range"].values():
        end["line"] += end["line"] > after
    return moved


def _hovers(
    editor: Editor, uri: str, lines: list[str], skip: int = -1
) -> dict[tuple[int, int], Json]:
    answers = {}
    for number, line in enumerate(lines):
        if number == skip:
            continue
        for name in NAME.finditer(line):
            where = {"line": number, "character": name.start()}
            answers[number, name.start()] = editor.request(
                "textDocument/hover", uri, position=where
            )
    return answers


@pytest.fixture(scope="module")
def intact(editor: Editor, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], Json]:
    path = tmp_path_factory.mktemp("intact") / "intact.yaml"
    uri = editor.open(path, "\n".join(LINES))
    editor.published(uri, 1)
    answers = _hovers(editor, uri, LINES)
    editor.close_document(uri)
    assert sum(a is not None for a in answers.values()) > 30  # names, not only blanks
    return answers


def test_the_family_breaks_the_yaml_in_every_way_after_most_lines() -> None:
    kinds = {kind for _, kind, _ in FAMILY}
    assert len(kinds) == 4
    assert len(FAMILY) > 2 * len(LINES)


@pytest.mark.parametrize("typed", [False, True], ids=["opened", "typed"])
@pytest.mark.parametrize(
    ("after", "kind", "text"), FAMILY, ids=[f"{a + 1}-{k}" for a, k, _ in FAMILY]
)
def test_every_intact_name_hovers_as_on_the_intact_chart(
    editor: Editor,
    intact: dict[tuple[int, int], Json],
    tmp_path: Path,
    after: int,
    kind: str,
    text: str,
    typed: bool,
) -> None:
    """Opened broken (the server reads the YAML error), or typed into the intact chart
    after a hover there (the server compares with the text that last parsed)."""
    path = tmp_path / "typing.yaml"
    if typed:
        uri = editor.open(path, "\n".join(LINES))
        editor.published(uri, 1)
        assert editor.request("textDocument/hover", uri, position=_at(LINES, "  tries:", 2))
        editor.published(uri, editor.replace(uri, text))
    else:
        uri = editor.open(path, text)
        editor.published(uri, 1)
    got = _hovers(editor, uri, text.split("\n"), skip=after + 1)
    editor.close_document(uri)
    wrong = []
    for (line, column), answer in intact.items():
        moved = (line + (line > after), column)
        if got[moved] != _shifted(answer, after):
            wrong.append((line + 1, column + 1, LINES[line].strip()))
    assert wrong == []


PARENTS = [
    n
    for n, line in enumerate(LINES[:-1])
    if re.fullmatch(r" *\w+:", line)
    and len(LINES[n + 1]) - len(LINES[n + 1].lstrip()) > 0
    and LINES[n + 1].startswith(line[: len(line) - len(line.lstrip())] + " ")
]


def test_a_parent_key_without_its_colon_keeps_the_names_under_it(
    editor: Editor, intact: dict[tuple[int, int], Json], tmp_path: Path
) -> None:
    """`on`, `states`, `events`... with the colon deleted (or not typed yet): the lines
    under the key keep their place, so every other name answers as before."""
    assert len(PARENTS) >= 6
    wrong = []
    for parent in PARENTS:
        lines = [*LINES[:parent], LINES[parent].rstrip(":"), *LINES[parent + 1 :]]
        uri = editor.open(tmp_path / f"parent{parent}.yaml", "\n".join(lines))
        editor.published(uri, 1)
        got = _hovers(editor, uri, lines, skip=parent)
        editor.close_document(uri)
        for place, answer in got.items():
            if answer != intact[place]:
                wrong.append((parent + 1, place[0] + 1, place[1] + 1, LINES[place[0]].strip()))
    assert wrong == []


def _at(lines: list[str], text: str, offset: int = 0) -> Json:
    number = next(n for n, line in enumerate(lines) if text in line)
    return {"line": number, "character": lines[number].index(text) + offset}


@pytest.mark.parametrize("opened_broken", [True, False])
def test_definition_and_references_answer_while_a_line_is_half_typed(
    editor: Editor, tmp_path: Path, opened_broken: bool
) -> None:
    typed = BASE.replace("      KICK: created\n", "      KICK: created\n      PA\n", 1)
    path = tmp_path / "typing.yaml"
    if opened_broken:
        uri = editor.open(path, typed)
        editor.published(uri, 1)
    else:  # typed into a chart that parsed: the edit's line is the one left out
        uri = editor.open(path, BASE)
        editor.published(uri, 1)
        assert editor.request("textDocument/hover", uri, position=_at(BASE.split("\n"), "enough"))
        editor.published(uri, editor.replace(uri, typed))
    lines = typed.split("\n")
    use = _at(lines, "guard: enough", len("guard: "))
    declared = _at(lines, "  enough:", 2)
    [definition] = editor.request("textDocument/definition", uri, position=use)
    assert definition["range"]["start"] == declared
    refs = editor.request(
        "textDocument/references", uri, position=use, context={"includeDeclaration": True}
    )
    assert sorted(r["range"]["start"]["line"] for r in refs) == [declared["line"], use["line"]]
    hover = editor.request("textDocument/hover", uri, position=_at(lines, "tries:", 1))
    assert "ctx.tries" in hover["contents"]["value"]
    # the half-typed line itself names nothing
    half = {"line": lines.index("      PA"), "character": 7}
    assert editor.request("textDocument/hover", uri, position=half) is None
    editor.close_document(uri)


def test_rename_waits_until_the_yaml_parses(editor: Editor, tmp_path: Path) -> None:
    typed = BASE.replace("      KICK: created\n", "      KICK: created\n      SCAN: {to: \n", 1)
    uri = editor.open(tmp_path / "typing.yaml", typed)
    editor.published(uri, 1)
    where = _at(typed.split("\n"), "guard: enough", len("guard: "))
    with pytest.raises(ServerFailed, match="the YAML does not parse"):
        editor.request("textDocument/rename", uri, position=where, newName="plenty")
    editor.published(uri, editor.replace(uri, BASE))
    edit = editor.request("textDocument/rename", uri, position=where, newName="plenty")
    assert len(edit["changes"][uri]) == 2
    editor.close_document(uri)

"""`statekit lsp` driven over stdio as an editor drives it: diagnostics, navigation, edits.

The expected diagnostics are statekit's own findings (`compile_source` for the
compile stage, `lint_source` for the analysis on save) converted here, by a
conversion written independently of the server's, to LSP's 0-based lines and
UTF-16 (or UTF-32) characters; a few are spelled out whole.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_client import ServerFailed
from lsp_session import Editor, Json

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.pipeline import compile_source
from statekit.lint.config import LintConfig, find_pyproject, load_project_config
from statekit.lint.lint_files import lint_source
from statekit.lint.registry import RULES

ROOT = Path(__file__).resolve().parents[2]
RULES_PAGE = "https://github.com/statekit/statekit/blob/main/docs/rules.md"
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "optional-dependencies"
]
MACHINES = [*sorted((ROOT / "machines").glob("*.yaml")), ROOT / "tests" / "charts" / "order.yaml"]

SMALL = """\
statechart: small
events:
  GO: {n: integer}
  STOP: {}
guards:
  big: {if: event.n > 3, else: TOO_SMALL}
initial: idle
states:
  idle:
    description: Waiting.
    on:
      GO: {to: busy, guard: big}
  busy:
    on:
      STOP: idle
"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Editor]]:
    """One server per offered position encoding, shared by the tests of this module (each
    test opens its own files, so nothing one test does shows in another's documents)."""
    started: dict[str, Editor] = {}
    yield started
    for session in started.values():
        session.close()


def server_for(
    servers: dict[str, Editor], root: Path, encodings: list[str] | None = None
) -> Editor:
    key = ",".join(encodings) if encodings is not None else "default"
    if key not in servers:
        servers[key] = Editor(root, encodings=encodings)
    return servers[key]


@pytest.fixture
def editor(servers: dict[str, Editor], tmp_path: Path) -> Iterator[Editor]:
    """The shared default server; the documents the test opened are closed after it."""
    session = server_for(servers, tmp_path)
    before = set(session.versions)
    yield session
    for uri in set(session.versions) - before:
        session.close_document(uri)
        session.published(uri)


# --- the expected side: statekit's findings in LSP units --------------------------------


def units(text: str, encoding: str) -> int:
    """Length of `text` in the code units of `encoding` (utf-8, utf-16 or utf-32)."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


def position(lines: list[str], line: int, column: int, encoding: str) -> Json:
    """LSP position of a 1-based (line, column in code points)."""
    text = lines[line - 1] if line - 1 < len(lines) else ""
    return {"line": line - 1, "character": units(text[: column - 1], encoding)}


def lsp_range(text: str, span: SourceSpan, encoding: str = "utf-16") -> Json:
    lines = text.split("\n")
    return {
        "start": position(lines, span.line, span.column, encoding),
        "end": position(lines, span.end_line, span.end_column, encoding),
    }


def expected(
    findings: tuple[Diagnostic, ...] | list[Diagnostic],
    text: str,
    uri: str,
    encoding: str = "utf-16",
) -> list[Json]:
    out = []
    for d in findings:
        here = lsp_range(text, d.span, encoding)
        related = [
            {
                "location": {"uri": uri, "range": lsp_range(text, r.span, encoding)},
                "message": r.message,
            }
            for r in d.related
        ] + [{"location": {"uri": uri, "range": here}, "message": n} for n in d.notes]
        advice = [n for n in d.notes if n[:1].strip() and not n.endswith(":")]
        item: Json = {
            "range": here,
            "message": "\n".join([d.message, *advice]),
            "severity": {Severity.ERROR: 1, Severity.WARNING: 2}.get(d.severity, 3),
            "code": d.slug,
            "source": "statekit",
        }
        if related:
            item["relatedInformation"] = related
        if d.slug in RULES:  # the rule's heading in docs/rules.md
            item["codeDescription"] = {"href": f"{RULES_PAGE}#{d.slug}"}
        out.append(item)
    return out


def config_for(path: Path) -> LintConfig:
    return load_project_config(find_pyproject(path.parent))


def compile_findings(path: Path, text: str) -> list[Json]:
    """What the compile stage publishes: every compile finding, configured."""
    config = config_for(path)
    result = compile_source(text, str(path))
    kept = [config.effective(d) for d in result.diagnostics]
    return expected([d for d in kept if d is not None], text, path.as_uri())


def lint_findings(path: Path, text: str) -> list[Json]:
    """What the analysis publishes: what `statekit lint` reports for this text."""
    report = lint_source(text, str(path), config_for(path))
    return expected(report.diagnostics, text, path.as_uri())


# --- variants of the reference machines ------------------------------------------------


class _First:
    """Replace the first match of `pattern` (a variant that applies where it matches)."""

    def __init__(self, pattern: str, replace: Callable[[re.Match[str]], str]) -> None:
        self.pattern = re.compile(pattern, re.M)
        self.replace = replace

    def applies(self, text: str) -> bool:
        return self.pattern.search(text) is not None

    def __call__(self, text: str) -> str:
        return self.pattern.sub(self.replace, text, count=1)


def _first(pattern: str, replace: Callable[[re.Match[str]], str]) -> _First:
    return _First(pattern, replace)


def _cases(variants: list[str]) -> list[Any]:
    """(machine, variant) for every variant that applies to the machine's text."""
    cases = []
    for machine in MACHINES:
        text = machine.read_text(encoding="utf-8")
        for name in variants:
            variant = VARIANTS[name]
            if not isinstance(variant, _First) or variant.applies(text):
                cases.append(pytest.param(machine, name, id=f"{machine.stem}-{name}"))
    return cases


VARIANTS: dict[str, Callable[[str], str]] = {
    "as-is": lambda text: text,
    "misspelt-target": _first(r"(\bto: \[?)([A-Za-z_][\w.]*)", lambda m: m[1] + m[2] + "x"),
    "misspelt-initial": _first(r"^(\s*initial: )(\w+)", lambda m: m[1] + m[2] + "x"),
    "unknown-context-field": _first(r"\bctx\.(\w+)", lambda m: f"ctx.{m[1]}_nope"),
    "cut-in-half": lambda text: text[: len(text) // 2],
    "tab-indent": lambda text: text.replace("\n  ", "\n\t", 1),
    "unclosed-flow": _first(r"\{", lambda m: "{["),
}


@pytest.mark.parametrize(("machine", "variant"), _cases(sorted(VARIANTS)))
def test_compile_diagnostics_of_each_machine_and_broken_variant(
    editor: Editor, tmp_path: Path, machine: Path, variant: str
) -> None:
    text = VARIANTS[variant](machine.read_text(encoding="utf-8"))
    path = tmp_path / machine.name
    uri = editor.open(path, text)
    assert editor.published(uri, 1) == compile_findings(path, text)


@pytest.mark.parametrize(
    ("machine", "variant"), _cases(["as-is", "misspelt-target", "unknown-context-field"])
)
def test_analysis_on_save_reports_what_statekit_lint_reports(
    editor: Editor, tmp_path: Path, machine: Path, variant: str
) -> None:
    text = VARIANTS[variant](machine.read_text(encoding="utf-8"))
    path = tmp_path / machine.name
    uri = editor.open(path, text)
    compiled = editor.published(uri, 1)
    if any(d["severity"] == 1 for d in compiled) and compile_source(text, str(path)).chart is None:
        return  # no chart, no analysis: the compile findings stand
    assert editor.analysed(uri) == lint_findings(path, text)


def test_a_finding_with_notes_and_an_unclassified_pair_spelled_out(
    editor: Editor, tmp_path: Path
) -> None:
    text = "statechart: c\nevents: {GO: {}}\ninitial: a\nstates:\n  a:\n    on: {GO: b}\n  b: {}\n"
    path = tmp_path / "c.yaml"
    uri = editor.open(path, text)
    assert editor.published(uri, 1) == []
    here = {"start": {"line": 6, "character": 2}, "end": {"line": 6, "character": 3}}
    found = [d for d in editor.analysed(uri) if d["code"] == "undefined-pair"]
    assert len(found) == 1
    assert found[0]["range"] == here
    message = found[0]["message"].split("\n")
    assert message[0] == (
        "event GO is not classified under 'b': no transition, `already` or `reject` answers it"
        " there (UNDEFINED_TRANSITION)"
    )
    assert message[-1].startswith("classify it at 'b': `reject: {GO: REASON}` there")
    assert not any(line.startswith((" ", "path from")) for line in message)  # no trace
    assert found[0]["relatedInformation"][0] == {
        "location": {"uri": uri, "range": here},
        "message": "UNDEFINED_TRANSITION in 1 of the 1 reachable configurations with 'b' active,"
        " for example in:",
    }
    broken = text.replace("on: {GO: b}", "on: {GOO: b}")
    assert editor.replace(uri, broken) == 2
    assert editor.published(uri, 2) == [
        {
            "range": {"start": {"line": 5, "character": 9}, "end": {"line": 5, "character": 12}},
            "message": "undeclared event 'GOO'\ndeclare it under events: (declared: GO)",
            "severity": 1,
            "code": "unknown-event",
            "codeDescription": {"href": f"{RULES_PAGE}#unknown-event"},
            "source": "statekit",
            "relatedInformation": [
                {
                    "location": {
                        "uri": uri,
                        "range": {
                            "start": {"line": 5, "character": 9},
                            "end": {"line": 5, "character": 12},
                        },
                    },
                    "message": "declare it under events: (declared: GO)",
                }
            ],
        }
    ]


# --- which documents are charts ---------------------------------------------------------

NOT_A_CHART = "name: not a chart\nstates: [a, b]\n"
BROKEN_CHART = "statechart: x\ninitial: nowhere\nstates:\n  a: {}\n"


@pytest.mark.parametrize(
    ("name", "language_id", "text", "is_chart"),
    [
        ("chart.yaml", "yaml", BROKEN_CHART, True),
        ("chart.yml", "yaml", BROKEN_CHART, True),
        ("quoted.yaml", "yaml", BROKEN_CHART.replace("statechart:", '"statechart":'), True),
        ("late.yaml", "yaml", "# a comment\n---\n" + BROKEN_CHART, True),
        ("template.yaml", "yaml", "statechart: x\ninitial: {{ start }\nstates: {a: {}}\n", True),
        ("chart.txt", "statekit-yaml", BROKEN_CHART, True),
        ("plain.statechart.yaml", "yaml", NOT_A_CHART, True),
        ("config.yaml", "yaml", NOT_A_CHART, False),
        ("nested.yaml", "yaml", "outer:\n  statechart: x\n", False),
        ("list.yaml", "yaml", "- statechart: x\n", False),
        ("chart.txt", "plaintext", BROKEN_CHART, False),
        ("chart.json", "json", BROKEN_CHART, False),
    ],
)
def test_which_documents_are_charts(
    editor: Editor, tmp_path: Path, name: str, language_id: str, text: str, is_chart: bool
) -> None:
    path = tmp_path / name
    uri = editor.open(path, text, language_id)
    found = editor.published(uri, 1)
    if is_chart:
        assert found and found == expected(compile_source(text, str(path)).diagnostics, text, uri)
    else:
        assert found == []
        assert editor.request("textDocument/documentSymbol", uri) is None


def test_a_document_becomes_a_chart_when_its_statechart_key_is_typed(
    editor: Editor, tmp_path: Path
) -> None:
    path = tmp_path / "grows.yaml"
    uri = editor.open(path, "initial: nowhere\nstates:\n  a: {}\n")
    assert editor.published(uri, 1) == []
    text = "statechart: x\ninitial: nowhere\nstates:\n  a: {}\n"
    editor.change(uri, [{"range": _at(0, 0, 0, 0), "text": "statechart: x\n"}])
    assert editor.published(uri, 2) == compile_findings(path, text)


# --- configuration ----------------------------------------------------------------------

UNUSED = """\
statechart: unused
events:
  GO: {}
  LATER: {}
initial: idle
states:
  idle:
    on: {GO: done}
  done: {final: true}
"""


@pytest.mark.parametrize(
    ("pyproject", "lint_key", "expect"),
    [
        (None, None, {"unused-event": 2}),
        ('[tool.statekit.lint]\nignore = ["unused-event"]\n', None, {}),
        (
            '[tool.statekit.lint]\nseverity = { unused-event = "error" }\n',
            None,
            {"unused-event": 1},
        ),
        ('[tool.statekit.lint]\nseverity = { unused-event = "off" }\n', None, {}),
        (None, "lint: {ignore: [unused-event]}\n", {}),
        (None, "lint: {severity: {unused-event: error}}\n", {"unused-event": 1}),
        (
            '[tool.statekit.lint]\nseverity = { unused-event = "error" }\n',
            "lint: {severity: {unused-event: warning}}\n",
            {"unused-event": 2},
        ),
        (None, "lint: {ignore: [no-such-rule]}\n", {"schema": 1, "unused-event": 2}),
        ("[tool.statekit.lint]\nignore = 3\n", None, {"config": 1, "unused-event": 2}),
        ("[tool.statekit.lint]\nshout = true\n", None, {"config": 1, "unused-event": 2}),
        ("[tool.statekit.lint\n", None, {"config": 1, "unused-event": 2}),
    ],
)
def test_project_and_chart_lint_settings_apply(
    editor: Editor,
    tmp_path: Path,
    pyproject: str | None,
    lint_key: str | None,
    expect: dict[str, int],
) -> None:
    project = tmp_path / "project"
    (project / "charts").mkdir(parents=True)
    if pyproject is not None:
        (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    text = UNUSED + (lint_key or "")
    path = project / "charts" / "small.yaml"
    uri = editor.open(path, text)
    editor.published(uri, 1)
    found = editor.analysed(uri)
    assert {d["code"]: d["severity"] for d in found} == expect
    for d in found:
        if d["code"] == "config":
            assert d["range"] == _at(0, 0, 0, 0)
            assert d["message"].startswith(f"{project / 'pyproject.toml'}: ")


# --- positions in the client's units ----------------------------------------------------


@pytest.mark.parametrize("encodings", [None, ["utf-16"], ["utf-32", "utf-16"], ["utf-8", "utf-16"]])
@pytest.mark.parametrize("prefix", ["", "é", "😀", "😀😀", "中文", "a😀b𝄞c"])
def test_positions_are_in_the_negotiated_encoding(
    servers: dict[str, Editor], tmp_path: Path, prefix: str, encodings: list[str] | None
) -> None:
    text = (
        "statechart: u\nevents: {GO: {}}\ninitial: a\nstates:\n"
        f'  a: {{description: "{prefix}", on: {{GOO: a, GO: a}}}}\n'
    )
    session = server_for(servers, tmp_path, encodings)
    encoding = session.initialized["capabilities"].get("positionEncoding", "utf-16")
    assert encoding == (encodings[0] if encodings else "utf-16")
    path = tmp_path / "u.yaml"
    uri = session.open(path, text)
    found = session.published(uri, 1)
    assert found == expected(compile_source(text, str(path)).diagnostics, text, uri, encoding)
    line = text.split("\n")[4]
    start = units(line[: line.index("GOO")], encoding)
    assert found[0]["range"]["start"] == {"line": 4, "character": start}
    # a ranged edit in the same units: GOO → GO (delete one O), then the finding is gone
    session.change(uri, [{"range": _at(4, start + 2, 4, start + 3), "text": ""}])
    assert session.published(uri, 2) == expected(
        compile_source(text.replace("GOO", "GO"), str(path)).diagnostics,
        text.replace("GOO", "GO"),
        uri,
        encoding,
    )
    session.close_document(uri)


def _at(line: int, character: int, end_line: int, end_character: int) -> Json:
    return {
        "start": {"line": line, "character": character},
        "end": {"line": end_line, "character": end_character},
    }


def test_ranged_edits_build_the_text_the_diagnostics_are_of(editor: Editor, tmp_path: Path) -> None:
    machine = ROOT / "machines" / "task.yaml"
    text = machine.read_text(encoding="utf-8")
    path = tmp_path / "task.yaml"
    uri = editor.open(path, text)
    editor.published(uri, 1)
    lines = text.split("\n")
    # type a misspelling into the first `to:` one character at a time, then remove it
    row = next(i for i, line in enumerate(lines) if re.search(r"\bto: \w", line))
    column = lines[row].index("to: ") + 4
    version = 1
    for character in "zq":
        version = editor.change(uri, [{"range": _at(row, column, row, column), "text": character}])
        column += 1
    lines[row] = lines[row][: column - 2] + "zq" + lines[row][column - 2 :]
    typed = "\n".join(lines)
    assert editor.published(uri, version) == compile_findings(path, typed)
    version = editor.change(uri, [{"range": _at(row, column - 2, row, column), "text": ""}])
    assert editor.published(uri, version) == compile_findings(path, text)


# --- the analysis off the request path ----------------------------------------------------


def test_a_newer_edit_supersedes_an_older_analysis(editor: Editor, tmp_path: Path) -> None:
    text = (ROOT / "machines" / "task.yaml").read_text(encoding="utf-8")
    path = tmp_path / "task.yaml"
    uri = editor.open(path, text)
    editor.save(uri)  # the analysis of version 1 starts as soon as it is compiled
    editor.replace(uri, VARIANTS["misspelt-target"](text))
    editor.replace(uri, text + "\n")
    final_text = text.replace("\nevents:\n", "\nevents:\n  Unheard: {}\n", 1)
    final = editor.replace(uri, final_text)
    assert editor.published(uri, final) == compile_findings(path, final_text)
    analysed = editor.analysed(uri)
    assert analysed == lint_findings(path, final_text)
    assert "unused-event" in {d["code"] for d in analysed}
    editor.stats()  # a round trip: everything the server sent before it has arrived
    versions = [
        m["params"].get("version")
        for m in editor.server.notifications
        if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]
    assert final not in versions  # one compile and one analysis publication, both taken
    assert versions == sorted(versions)  # nothing older arrived after something newer


def test_a_chart_beyond_the_budget_gets_analysis_limit_and_the_editor_still_answers(
    tmp_path: Path,
) -> None:
    text = (ROOT / "machines" / "task.yaml").read_text(encoding="utf-8")
    path = tmp_path / "task.yaml"
    session = Editor(tmp_path, "--max-configurations", "3")
    try:
        uri = session.open(path, text)
        session.published(uri, 1)
        session.save(uri)
        symbols = session.request("textDocument/documentSymbol", uri)
        assert [s["name"] for s in symbols][:1] == ["lifecycle"]
        found = session.published(uri, 1)
    finally:
        session.close()
    assert "analysis-limit" in {d["code"] for d in found}


# --- navigation through the LSP methods ---------------------------------------------------


def _find(text: str, marker: str, offset: int | None = None) -> Json:
    index = text.index(marker) + (len(marker) if offset is None else offset)
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def test_completion_hover_definition_and_references(editor: Editor, tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    uri = editor.open(path, SMALL)
    editor.published(uri, 1)
    where = _find(SMALL, "{to: b", 5) if "{to: b" in SMALL else _find(SMALL, "{to: busy", 5)
    completion = editor.request("textDocument/completion", uri, position=where)
    assert completion["isIncomplete"] is False
    labels = [item["label"] for item in completion["items"]]
    assert labels == ["idle", "busy"]
    edit_range = _at(where["line"], where["character"], where["line"], where["character"] + 4)
    assert [item["textEdit"] for item in completion["items"]] == [
        {"range": edit_range, "newText": "idle"},
        {"range": edit_range, "newText": "busy"},
    ]

    hovered = editor.request("textDocument/hover", uri, position=_find(SMALL, "STOP: idle", 7))
    assert hovered["contents"]["kind"] == "markdown"
    assert "Waiting." in hovered["contents"]["value"]
    assert hovered["range"] == _at(14, 12, 14, 16)

    definition = editor.request(
        "textDocument/definition", uri, position=_find(SMALL, "STOP: idle", 7)
    )
    assert definition == [{"uri": uri, "range": _at(8, 2, 8, 6)}]
    refs = editor.request(
        "textDocument/references",
        uri,
        position=_find(SMALL, "guard: big", 8),
        context={"includeDeclaration": True},
    )
    assert refs == [
        {"uri": uri, "range": _at(5, 2, 5, 5)},
        {"uri": uri, "range": _at(11, 28, 11, 31)},
    ]
    symbols = editor.request("textDocument/documentSymbol", uri)
    assert [s["name"] for s in symbols][:2] == ["idle", "busy"]


def test_rename_and_its_refusal(editor: Editor, tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    uri = editor.open(path, SMALL)
    editor.published(uri, 1)
    at_idle = _find(SMALL, "STOP: idle", 7)
    prepared = editor.request("textDocument/prepareRename", uri, position=at_idle)
    assert prepared == _at(14, 12, 14, 16)
    renamed = editor.request("textDocument/rename", uri, position=at_idle, newName="waiting")
    assert renamed == {
        "changes": {
            uri: [
                {"range": _at(6, 9, 6, 13), "newText": "waiting"},
                {"range": _at(8, 2, 8, 6), "newText": "waiting"},
                {"range": _at(14, 12, 14, 16), "newText": "waiting"},
            ]
        }
    }
    with pytest.raises(ServerFailed, match="busy"):
        editor.request("textDocument/rename", uri, position=at_idle, newName="busy")
    assert (
        editor.request("textDocument/prepareRename", uri, position=_find(SMALL, "description", 2))
        is None
    )


def test_code_actions_fix_the_findings_they_are_asked_about(editor: Editor, tmp_path: Path) -> None:
    text = SMALL.replace("STOP: idle", "STPO: idle")
    path = tmp_path / "small.yaml"
    uri = editor.open(path, text)
    found = editor.published(uri, 1)
    assert [d["code"] for d in found] == ["unknown-event"]
    actions = editor.request(
        "textDocument/codeAction",
        uri,
        range=found[0]["range"],
        context={"diagnostics": found},
    )
    titles = [a["title"] for a in actions]
    assert all(a["kind"] == "quickfix" for a in actions)
    respell = next(a for a in actions if "STOP" in a["title"])
    assert respell["edit"] == {"changes": {uri: [{"range": found[0]["range"], "newText": "STOP"}]}}
    assert respell["diagnostics"] == found
    assert any("STPO" in t for t in titles)  # declare it, the other fix
    line = found[0]["range"]["start"]["line"]
    for column in (0, found[0]["range"]["end"]["character"] + 1):  # the cursor, off the name
        cursor = {"line": line, "character": column}
        at_cursor = editor.request(
            "textDocument/codeAction",
            uri,
            range={"start": cursor, "end": cursor},
            context={"diagnostics": found},
        )
        assert at_cursor == actions
    nothing = editor.request(
        "textDocument/codeAction", uri, range=_at(0, 0, 0, 1), context={"diagnostics": []}
    )
    assert nothing == []


# --- a long session: what the server retains is bounded -----------------------------------


def test_a_long_edit_session_retains_a_bounded_amount(editor: Editor, tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    uri = editor.open(path, SMALL)
    editor.published(uri, 1)

    def burst(edits: int) -> dict[str, Any]:
        version = 0
        for n in range(edits):
            text = SMALL.replace("Waiting.", f"Waiting {n}.")
            version = editor.replace(uri, text if n % 3 else text.replace("STOP: idle", "STOP: x"))
            editor.published(uri, version)
            if n % 15 == 1:  # a version that compiles (n % 3 == 1)
                editor.request("textDocument/hover", uri, position=_find(SMALL, "STOP: idle", 7))
                editor.analysed(uri)
        return editor.stats()

    burst(50)
    first = burst(150)
    second = burst(150)
    assert first["documents"] == second["documents"] == 1
    assert second["timers"] <= 1 and second["tasks"] <= 1
    assert second["handlers"] <= 1  # the stats request itself
    # the second 150 edits leave no more behind than the noise of one burst
    assert second["objects"] - first["objects"] < first["objects"] // 50

    for n in range(40):
        other = editor.open(tmp_path / f"extra{n}.yaml", SMALL)
        editor.published(other, 1)
        editor.close_document(other)
        assert editor.published(other) == []
    after = editor.stats()
    assert after["documents"] == 1 and after["workspace_documents"] == 1


def test_a_server_that_dies_fails_the_harness_instead_of_hanging_it(tmp_path: Path) -> None:
    with pytest.raises(ServerFailed, match="exited"):
        Editor(tmp_path, command=[sys.executable, "-c", "print('bye')"])


@pytest.mark.parametrize("missing", ["pygls", "lsprotocol", "pygls.lsp.server"])
def test_without_the_lsp_extra_the_command_says_what_to_install(missing: str) -> None:
    program = (
        f"import sys; sys.modules[{missing!r}] = None\n"
        "from statekit.cli.main import main\n"
        "sys.argv = ['statekit', 'lsp']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stderr == (
        "statekit lsp needs the language server library pygls (statekit's `lsp` extra): "
        "pip install 'pygls>=2.0,<3'\n"
    )
    assert "pygls>=2.0,<3" in EXTRAS["lsp"], "the message names what the extra installs"
    assert "Traceback" not in done.stderr


def test_the_analysis_runs_when_the_text_is_still_without_a_save(tmp_path: Path) -> None:
    session = Editor(tmp_path, "--analysis-delay", "0")  # the last --analysis-delay counts
    try:
        path = tmp_path / "unused.yaml"
        uri = session.open(path, UNUSED)
        assert session.published(uri, 1) == compile_findings(path, UNUSED)
        still = session.published(uri, 1)  # no didSave: the text was still
    finally:
        session.close()
    assert still == lint_findings(path, UNUSED)
    assert [d["code"] for d in still] == ["unused-event"]

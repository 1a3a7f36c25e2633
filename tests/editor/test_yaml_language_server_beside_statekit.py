"""yaml-language-server attached beside `statekit lsp`, as docs/editor.md sets it up.

Both check a chart against the schema, so a misspelt key would be reported
twice. docs/editor.md tells the user to turn yaml-language-server's
validation off for charts (`yaml.validate: false`): the test shows that with
it on, yaml-language-server reports the error statekit reports too, and that
with it off, it reports nothing while its hover (the schema's documentation,
rendered from `markdownDescription`, code spans and all) still works.

The server comes from npm (`make node-tools`, part of `make test`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_client import LanguageServer
from node_tools import NODE_MODULES, require

from statekit.compiler.pipeline import compile_source

SERVER = NODE_MODULES / "yaml-language-server" / "bin" / "yaml-language-server"
MODELINE = "# yaml-language-server: $schema=statechart.schema.json\n"
CHART = MODELINE + "statechart: c\ninitial: a\nstates:\n  a: {descripton: typo}\n"
"""A chart with a misspelt key (line 4 of the text as LSP counts, from 0)."""
MISSPELT_LINE = 4


def _settings(validate: bool) -> dict[str, object]:
    return {
        "validate": validate,
        "hover": True,
        "completion": True,
        "format": {"enable": False},
        "schemaStore": {"enable": False},
        "schemas": {},
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("beside")
    with (here / "statechart.schema.json").open("wb") as out:  # as `statekit schema >` writes it
        subprocess.run([sys.executable, "-m", "statekit.cli", "schema"], stdout=out, check=True)
    return here


def _server(folder: Path, validate: bool) -> Iterator[tuple[LanguageServer, str]]:
    settings = _settings(validate)
    server = LanguageServer(
        ["node", str(require(SERVER)), "--stdio"],
        lambda section: settings if section == "yaml" else None,
    )
    try:
        server.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder.as_uri(),
                "capabilities": {
                    "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}},
                    "workspace": {"configuration": True},
                },
            },
        )
        server.notify("initialized", {})
        server.notify("workspace/didChangeConfiguration", {"settings": {"yaml": settings}})
        uri = (folder / f"chart-{validate}.yaml").as_uri()
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": CHART}},
        )
        yield server, uri
    finally:
        server.close()


@pytest.fixture(scope="module")
def validating(folder: Path) -> Iterator[tuple[LanguageServer, str]]:
    yield from _server(folder, validate=True)


@pytest.fixture(scope="module")
def not_validating(folder: Path) -> Iterator[tuple[LanguageServer, str]]:
    yield from _server(folder, validate=False)


def _published(server: LanguageServer, uri: str) -> list[Any]:
    params = server.notification("textDocument/publishDiagnostics", lambda p: p.get("uri") == uri)
    found: list[Any] = params["diagnostics"]
    return found


def test_statekit_reports_the_misspelt_key_itself() -> None:
    found = compile_source(CHART, "chart.yaml").diagnostics
    assert [(d.slug, d.span.line - 1) for d in found] == [("schema", MISSPELT_LINE)]


def test_validating_yaml_language_server_reports_it_a_second_time(
    validating: tuple[LanguageServer, str],
) -> None:
    server, uri = validating
    assert [d["range"]["start"]["line"] for d in _published(server, uri)] == [MISSPELT_LINE]


def test_with_validation_off_it_reports_nothing(
    not_validating: tuple[LanguageServer, str],
) -> None:
    server, uri = not_validating
    assert _published(server, uri) == []


@pytest.mark.parametrize("fixture", ["validating", "not_validating"])
def test_hover_renders_the_schemas_markdown_either_way(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    server, uri = request.getfixturevalue(fixture)
    hovered = server.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 1}},  # `initial`
    )
    text = hovered["contents"]["value"]
    # the code spans of `markdownDescription`, not a plain description's escaped backticks
    assert "required when `states` is present and `parallel` is not." in text

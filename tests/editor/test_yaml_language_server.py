"""The schema in an editor: yaml-language-server, driven over stdio, hovers each key with its text.

A chart opened with the modeline `# yaml-language-server: $schema=...` pointing
at the file `statekit schema` writes. For every place the schema documents (a
property, a named entry such as a state or an event, a scalar list item) the
test hovers one occurrence in the chart and expects that place's own
`description`, not the text of the definition it refers to. The table of
places is taken from the schema, and the charts must cover all of them, so a
new property gets a hover check without anyone writing one.

The server comes from npm (`make node-tools`, part of `make test`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from lsp_client import LanguageServer
from node_tools import NODE_MODULES, require

from statekit.compiler.schema.document import schema_text
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode, to_plain

REPO = Path(__file__).resolve().parents[2]
SERVER = Path(
    os.environ.get(
        "STATEKIT_YAML_LANGUAGE_SERVER",  # to try another version of the server
        NODE_MODULES / "yaml-language-server" / "bin" / "yaml-language-server",
    )
)
FULL_CHART = REPO / "tests/compiler/fixtures/full_chart.yaml"

# What the full chart leaves out: the state keys at the root (a root can be parallel,
# final or even a history state, as far as the schema goes), an expression invariant's
# description, an effect list item written as a flow mapping.
SMALL_CHARTS = {
    "root_keys": """\
statechart: root_keys
initial: a
on: {GO: a}
after: {1h: a}
always: {to: a, if: "false"}
entry: [{raise: GO}]
exit: [{raise: GO}]
already: [GO]
done: a
invoke: [{id: helper, chart: helper}]
invariants:
  positive: {assert: "true", description: Always.}
states:
  a: {}
""",
    "root_parallel": "statechart: root_parallel\nparallel: true\nstates: {a: {}, b: {}}\n",
    "root_final": "statechart: root_final\nfinal: true\noutput: {answer: '42'}\n",
    "root_history": "statechart: root_history\nhistory: deep\ndefault: a\n",
}

SETTINGS: dict[str, object] = {
    "validate": True,
    "hover": True,
    "completion": True,
    "format": {"enable": False},
    "schemaStore": {"enable": False},
    "schemas": {},
    "customTags": [],
}


def _server_command() -> list[str]:
    return ["node", str(require(SERVER)), "--stdio"]


# --- the places the schema documents, found in the charts --------------------------


@dataclass(frozen=True)
class Place:
    """One documented place of the schema and one occurrence of it in a chart."""

    schema_path: str  # e.g. definitions/state/properties/on
    description: str
    chart: str  # which chart (a key of `_charts()`)
    line: int  # 0-based, as LSP counts
    character: int


MODELINE = "# yaml-language-server: $schema=statechart.schema.json\n"
"""Points at the schema file beside the chart (a relative path, as a repository would have it)."""


def _charts() -> dict[str, str]:
    """The charts as the editor opens them, each starting with the modeline."""
    full = FULL_CHART.read_text(encoding="utf-8")
    assert full.startswith("# yaml-language-server:")  # its own modeline, replaced
    return {
        "full_chart": MODELINE + full.split("\n", 1)[1],
        **{name: MODELINE + text for name, text in SMALL_CHARTS.items()},
    }


def _write_schema(folder: Path) -> None:
    """Save the schema as a user would: `statekit schema > statechart.schema.json`."""
    with (folder / "statechart.schema.json").open("wb") as out:
        subprocess.run([sys.executable, "-m", "statekit.cli", "schema"], stdout=out, check=True)


class _Resolver:
    """Which sub-schema of the document applies to a value, as a validator would pick it."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def resolve(self, node: Any, path: str, value: object) -> tuple[Any, str]:
        """Follow `$ref`s (also wrapped in a one-item allOf), into the branch `value` fits."""
        while True:
            if len(node.get("allOf", ())) == 1:  # a `$ref` wrapped to carry a description
                node, path = node["allOf"][0], f"{path}/allOf/0"
                continue
            if "$ref" in node:
                name = str(node["$ref"]).rsplit("/", 1)[-1]
                node, path = self.document["definitions"][name], f"definitions/{name}"
                continue
            for union in ("oneOf", "anyOf"):
                if union in node:
                    for index, branch in enumerate(node[union]):
                        if self._valid(branch, value):
                            node, path = branch, f"{path}/{union}/{index}"
                            break
                    else:
                        raise AssertionError(f"{value!r} fits no branch of {path}")
                    break
            else:
                return node, path

    def _valid(self, branch: Any, value: object) -> bool:
        probe = {**branch, "definitions": self.document["definitions"]}
        return bool(Draft7Validator(probe).is_valid(value))


def _places(document: dict[str, Any]) -> Iterator[Place]:
    resolver = _Resolver(document)
    for chart, text in _charts().items():
        root, problems = load_yaml(text, f"{chart}.yaml")
        assert root is not None and not problems, problems
        yield from _visit(resolver, (chart, text.splitlines()), root, document, "")


def _visit(
    resolver: _Resolver, chart: tuple[str, list[str]], node: Node, schema: Any, path: str
) -> Iterator[Place]:
    schema, path = resolver.resolve(schema, path, to_plain(node))
    if isinstance(node, MappingNode):
        for key, value in node.items:
            name = str(key.value)
            if name in schema.get("properties", {}):
                sub, sub_path = schema["properties"][name], f"{path}/properties/{name}"
            else:
                sub, sub_path = schema["additionalProperties"], f"{path}/additionalProperties"
            yield _place(sub, sub_path, chart, key)
            yield from _visit(resolver, chart, value, sub, sub_path)
    elif isinstance(node, SequenceNode):
        if "items" not in schema:  # a value the schema leaves open (a list field's default)
            return
        sub, sub_path = schema["items"], f"{path}/items"
        for item in node.items:
            # a hover lands on the item itself at a scalar or a flow collection's bracket
            # (at a block mapping item it lands on the first key)
            _, lines = chart
            start = lines[item.span.line - 1][item.span.column - 1]
            if isinstance(item, ScalarNode) or start in "{[":
                yield _place(sub, sub_path, chart, item)
            yield from _visit(resolver, chart, item, sub, sub_path)


def _place(schema: Any, path: str, chart: tuple[str, list[str]], at: Node) -> Place:
    return Place(
        schema_path=path.lstrip("/"),
        description=str(schema.get("description", "")),
        chart=chart[0],
        line=at.span.line - 1,
        character=at.span.column - 1,
    )


def _documented(document: dict[str, Any]) -> set[str]:
    """Every property, named entry and list item of the schema that has a description."""
    found: set[str] = set()

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        for name, sub in node.get("properties", {}).items():
            if "description" in sub:
                found.add(f"{path}properties/{name}")
            walk(sub, f"{path}properties/{name}/")
        for keyword in ("additionalProperties", "items"):
            sub = node.get(keyword)
            if isinstance(sub, dict) and "description" in sub:
                found.add(f"{path}{keyword}")
            walk(sub, f"{path}{keyword}/")
        for union in ("oneOf", "anyOf"):
            for index, branch in enumerate(node.get(union, [])):
                walk(branch, f"{path}{union}/{index}/")

    walk(document, "")
    for name, definition in document["definitions"].items():
        walk(definition, f"definitions/{name}/")
    return found


DOCUMENT: dict[str, Any] = json.loads(schema_text())  # what `statekit schema` prints
PLACES = {place.schema_path: place for place in reversed(list(_places(DOCUMENT)))}
"""The first occurrence of each documented place in the charts."""


def test_the_charts_cover_every_documented_place() -> None:
    assert _documented(DOCUMENT) - set(PLACES) == set()


# --- the server ----------------------------------------------------------------------


@dataclass(frozen=True)
class Editor:
    """The running server and the URI of each chart it has open."""

    server: LanguageServer
    uris: dict[str, str]


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    command = _server_command()
    folder = tmp_path_factory.mktemp("editor")
    _write_schema(folder)
    server = LanguageServer(command, lambda section: SETTINGS if section == "yaml" else None)
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
        server.notify("workspace/didChangeConfiguration", {"settings": {"yaml": SETTINGS}})
        uris: dict[str, str] = {}
        for chart, text in _charts().items():
            uris[chart] = (folder / f"{chart}.yaml").as_uri()
            server.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uris[chart],
                        "languageId": "yaml",
                        "version": 1,
                        "text": text,
                    }
                },
            )
        yield Editor(server, uris)
    finally:
        server.close()


def _hover(editor: Editor, place: Place) -> str:
    result = editor.server.request(
        "textDocument/hover",
        {
            "textDocument": {"uri": editor.uris[place.chart]},
            "position": {"line": place.line, "character": place.character},
        },
    )
    if not result:
        return ""
    contents = result["contents"]
    text = contents["value"] if isinstance(contents, dict) else str(contents)
    return _unescape(text)


def _unescape(markdown: str) -> str:
    """The server escapes Markdown punctuation in descriptions (`\\_`, `\\(`): undo it."""
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~'])", r"\1", markdown)


@pytest.mark.parametrize("schema_path", sorted(PLACES))
def test_hover_shows_the_places_own_description(editor: Editor, schema_path: str) -> None:
    place = PLACES[schema_path]
    assert place.description, schema_path
    text = _hover(editor, place)
    assert place.description in text, (
        f"hover at {place.chart}:{place.line + 1}:{place.character + 1} ({schema_path}) "
        f"shows {text!r}, not {place.description!r}"
    )


@pytest.mark.parametrize("chart", sorted(_charts()))
def test_the_chart_opens_without_problems(editor: Editor, chart: str) -> None:
    # the schema accepts in the editor what the compiler accepts (no false warnings)
    uri = editor.uris[chart]
    published = editor.server.notification(
        "textDocument/publishDiagnostics", lambda params: params.get("uri") == uri
    )
    assert published["diagnostics"] == []

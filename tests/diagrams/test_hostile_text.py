"""Hostile names and descriptions through every output format, read back by that format's
own parser: the hostile text comes out as text.

The chart (`hostile_charts`) puts HTML, Markdown links and code spans, pipes, Mermaid's and
DOT's characters, rich markup, escape sequences, a bidirectional override, a C1 control and
a noncharacter in every place the schema lets them be (state and event names, descriptions).
Then:

- Markdown (`statekit docs`, and the language server's hovers): markdown-it reads the
  page: no raw HTML, no link or image but the page's own, every name in a code span
  whole; the HTML it renders, read by an HTML parser, holds no element the page did not
  write, and shows each description as its text;
- DOT: Graphviz lays it out (a noncharacter made it fail) and the SVG it writes is XML
  with no element a name brought in;
- Mermaid: Mermaid's parser reads it, and the text holds no control character;
- terminal (`explain`, `explain --table`, `paths`, `lint`, `render --format mermaid` and
  `--format dot`, `races`, `diff`):
  no character a terminal acts on, and no rich markup read;
- SARIF: JSON whose messages are the findings' own text;
- GitHub annotations: one workflow command per line, whose data holds no control character.
"""

from __future__ import annotations

import html
import html.parser
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_process import statekit as run_statekit
from hostile_charts import HOSTILE_DESCRIPTION, HOSTILE_NAMES, hostile_chart, write_hostile_chart
from markdown_it import MarkdownIt
from test_mermaid_reads import _read as mermaid_read

from statekit.compiler.markdown_text import markdown_code
from statekit.compiler.pipeline import compile_file
from statekit.compiler.terminal_text import is_unsafe, terminal_text
from statekit.diagrams.dot import to_dot
from statekit.diagrams.mermaid import to_mermaid
from statekit.diagrams.model import extract
from statekit.diagrams.views import whole_view
from statekit.lsp.document import chart_document
from statekit.lsp.navigation import hover
from statekit.lsp.records import Position


@pytest.fixture(scope="module")
def chart_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hostile_chart(tmp_path_factory.mktemp("hostile"))


def statekit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_statekit(*args, cwd=cwd, env={**os.environ, "COLUMNS": "4000"})  # no folding


def one_line(text: str) -> str:
    return " ".join(text.split())


def unsafe_in(text: str, allowed: str = "\n") -> list[str]:
    return sorted({c for c in text if is_unsafe(c) and c not in allowed})


# --- Markdown, and the HTML it renders -----------------------------------------------------


@pytest.fixture(scope="module")
def page(chart_file: Path) -> str:
    out = chart_file.parent / "docs"
    done = statekit("docs", chart_file.name, "-o", str(out), cwd=chart_file.parent)
    assert done.returncode in (0, 1), done.stderr
    return (out / "hostile.md").read_text(encoding="utf-8")


def inline_tokens(page: str) -> Iterator[object]:
    for token in MarkdownIt("commonmark").enable("table").parse(page):
        yield token
        yield from token.children or ()


def test_markdown_has_no_raw_html(page: str) -> None:
    kinds = {t.type for t in inline_tokens(page)}  # type: ignore[attr-defined]
    assert "html_inline" not in kinds
    html_blocks = [t.content for t in inline_tokens(page) if t.type == "html_block"]  # type: ignore[attr-defined]
    assert html_blocks == [page.splitlines()[0] + "\n"]  # the generated-file comment alone


def test_markdown_links_and_images_are_the_pages_own(page: str) -> None:
    links = [t.attrGet("href") for t in inline_tokens(page) if t.type == "link_open"]  # type: ignore[attr-defined]
    images = [t.attrGet("src") for t in inline_tokens(page) if t.type == "image"]  # type: ignore[attr-defined]
    assert links[0] == "../hostile.yaml"  # then each picture links to its SVG
    assert all(str(link).endswith(".svg") for link in links[1:])
    assert images and all(str(src).endswith(".png") for src in images)


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=[repr(n) for n in HOSTILE_NAMES])
def test_markdown_code_spans_hold_each_name_whole(page: str, name: str) -> None:
    spans = {t.content for t in inline_tokens(page) if t.type == "code_inline"}  # type: ignore[attr-defined]
    assert one_line(name).replace("|", "\\|") in spans or one_line(name) in spans


class _Elements(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_rendered_html_has_only_the_pages_elements_and_shows_the_text(page: str) -> None:
    reader = _Elements()
    reader.feed(MarkdownIt("commonmark").enable("table").render(page))
    page_elements = {"h1", "h2", "h3", "p", "a", "img", "pre", "code", "table", "thead",
                     "tbody", "tr", "th", "td", "ul", "li", "em", "br"}  # fmt: skip
    assert reader.tags <= page_elements, reader.tags - page_elements
    assert reader.attributes <= {"href", "src", "alt", "class", "style"}
    shown = one_line("".join(reader.text))
    assert one_line(HOSTILE_DESCRIPTION) in shown
    for name in HOSTILE_NAMES:
        assert one_line(name) in shown, name


def test_language_server_hovers_show_names_and_descriptions_as_text(chart_file: Path) -> None:
    text = chart_file.read_text(encoding="utf-8")
    doc = chart_document(text)
    assert doc.chart is not None
    shown = []
    for number, line in enumerate(text.splitlines()):
        indent = len(line) - len(line.lstrip())
        found = hover(doc, Position(number, indent + 2))
        if found is not None:
            shown.append(found.markdown)
    assert len(shown) > len(HOSTILE_NAMES)
    for markdown in shown:
        tokens = list(inline_tokens(markdown))
        kinds = {t.type for t in tokens}  # type: ignore[attr-defined]
        assert not kinds & {"html_inline", "html_block", "link_open", "image"}, markdown
    hovered = " ".join(shown)
    for name in HOSTILE_NAMES:
        assert markdown_code(name) in hovered, name


# --- DOT ------------------------------------------------------------------------------


def test_graphviz_lays_out_the_dot_and_writes_xml_without_foreign_elements(
    chart_file: Path,
) -> None:
    result = compile_file(str(chart_file))
    assert result.chart is not None
    dot = to_dot(whole_view(extract(result.chart)))
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    root = ET.fromstring(done.stdout)
    tags = {element.tag.rsplit("}", 1)[-1] for element in root.iter()}
    assert tags <= {"svg", "g", "title", "text", "path", "polygon", "ellipse", "a", "polyline"}
    texts = " ".join(e.text or "" for e in root.iter() if e.tag.endswith("text"))
    for name in HOSTILE_NAMES:  # controls drawn as spaces, a noncharacter as U+FFFD
        drawn = "".join(
            " " if unicode_control(c) else "\ufffd" if c == "\ufffe" else c for c in name
        )
        assert one_line(drawn) in one_line(texts), name


def unicode_control(char: str) -> bool:
    return ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0


# --- Mermaid --------------------------------------------------------------------------


def test_mermaid_reads_the_text_and_it_holds_no_control_character(chart_file: Path) -> None:
    result = compile_file(str(chart_file))
    assert result.chart is not None
    text = to_mermaid(whole_view(extract(result.chart)))
    assert unsafe_in(text) == []
    [read] = mermaid_read([text])
    assert read["error"] is None
    assert len(read["nodes"]) > len(HOSTILE_NAMES)


# --- terminal -------------------------------------------------------------------------

TERMINAL_COMMANDS = {
    "explain": ["explain"],
    "explain --table": ["explain", "--table"],
    "paths": ["paths"],
    "lint": ["lint"],
    "render --format mermaid": ["render", "--format", "mermaid"],
    "render --format dot": ["render", "--format", "dot"],
    "races": ["races"],
    "diff": ["diff"],
}


@pytest.mark.parametrize("command", TERMINAL_COMMANDS, ids=list(TERMINAL_COMMANDS))
def test_terminal_output_holds_no_character_a_terminal_acts_on(
    chart_file: Path, command: str
) -> None:
    arguments = [*TERMINAL_COMMANDS[command], chart_file.name]
    if command == "diff":  # against a version whose start state lost its transitions
        changed = chart_file.with_name("changed.yaml")
        chart = hostile_chart()
        chart["states"]["start"]["on"] = {}
        chart["states"]["start"]["reject"] = {"*": "NOT_YET"}
        changed.write_text(yaml.safe_dump(chart, allow_unicode=False), encoding="utf-8")
        arguments.append(changed.name)
    done = statekit(*arguments, cwd=chart_file.parent)
    assert done.returncode in (0, 1), done.stderr
    assert unsafe_in(done.stdout) == [] and unsafe_in(done.stderr) == []
    if command.startswith(("explain", "paths")):
        for name in HOSTILE_NAMES:  # each name shown, escaped, and rich markup not read
            assert terminal_text(name).split("|")[0] in done.stdout, name


# --- SARIF and GitHub annotations -----------------------------------------------------


def test_sarif_messages_are_the_findings_text(chart_file: Path) -> None:
    done = statekit("lint", "--format", "sarif", chart_file.name, cwd=chart_file.parent)
    document = json.loads(done.stdout)
    messages = [r["message"]["text"] for r in document["runs"][0]["results"]]
    for name in HOSTILE_NAMES:
        if not any(c in name for c in "\x1b\u202e\x9b\ufffe"):
            continue
        assert any(repr(name)[1:-1] in m or name in m for m in messages), name


def test_github_annotations_are_one_command_a_line_without_controls(chart_file: Path) -> None:
    done = statekit("lint", "--format", "github", chart_file.name, cwd=chart_file.parent)
    lines = done.stdout.splitlines()
    assert lines
    for line in lines:
        match = re.fullmatch(r"::(error|warning) ((?:\w+=[^,:]*,?)*)::(.*)", line)
        assert match, line
        data = match.group(3).replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
        assert unsafe_in(data, allowed="\n") == [], line

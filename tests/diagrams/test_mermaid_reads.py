"""Mermaid itself reads what we write: its parser and its state database, driven from Node.

Every Mermaid text we produce for the reference machines (the blocks in
docs/machines and every view of a split drawing) and for the diagram test
charts goes through Mermaid's own `getDiagramFromText` and the state
database's `getData` (the step before layout, which also refuses what the
grammar lets through, such as a description on a composite state). Then,
in what Mermaid built: every final state has an edge to an end marker, and
every targetless transition is in its state's box or in a note joined to it.
No browser is needed: jsdom stands in for the page.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from diagram_charts import odd, parallel_root, sink, targetless, timed
from node_tools import HARNESS_TIMEOUT_S, NODE_MODULES, REPO, require

from statekit.compiler.ir import StateKind
from statekit.compiler.pipeline import compile_file
from statekit.diagrams.mermaid import to_mermaid
from statekit.diagrams.model import Diagram, extract
from statekit.diagrams.views import EdgeLabel, Split, View, plan_views, whole_view

SCRIPT = Path(__file__).with_name("mermaid_data.mjs")
MACHINES = sorted((REPO / "machines").glob("*.yaml"))


def _machine(path: Path) -> Callable[[], Diagram]:
    def load() -> Diagram:
        result = compile_file(str(path))
        assert result.chart is not None
        return extract(result.chart)

    return load


CHARTS: dict[str, Callable[[], Diagram]] = {
    "sink": sink,
    "odd": odd,
    "targetless": targetless,
    "parallel_root": parallel_root,
    "timed": timed,
    "full_chart": _machine(REPO / "tests/compiler/fixtures/full_chart.yaml"),
    **{path.stem: _machine(path) for path in MACHINES},
}


@dataclass(frozen=True)
class Drawn:
    """One Mermaid text and what Mermaid made of it."""

    name: str
    text: str
    view: View | None  # None for a block read back from docs/machines
    result: dict[str, Any]


def _read(texts: list[str]) -> list[dict[str, Any]]:
    modules = require(NODE_MODULES / "mermaid")
    require(NODE_MODULES / "jsdom")
    done = subprocess.run(
        ["node", str(SCRIPT), str(modules.parent)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=HARNESS_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(results) == len(texts)
    return results


def _doc_blocks() -> dict[str, str]:
    found = {}
    for page in sorted((REPO / "docs" / "machines").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for index, block in enumerate(re.findall(r"^```mermaid\n(.*?)^```", text, re.M | re.S)):
            found[f"docs/machines/{page.name}#{index}"] = block
    return found


@pytest.fixture(scope="module")
def drawn() -> dict[str, Drawn]:
    texts: dict[str, tuple[str, View | None]] = {
        name: (text, None) for name, text in _doc_blocks().items()
    }
    for chart, load in CHARTS.items():
        diagram = load()
        texts[f"{chart} (whole)"] = (to_mermaid(whole_view(diagram)), whole_view(diagram))
        for view in plan_views(diagram, Split.ALWAYS):
            texts[f"{chart} ({view.title})"] = (to_mermaid(view), view)
    results = _read([text for text, _ in texts.values()])
    return {
        name: Drawn(name, text, view, result)
        for (name, (text, view)), result in zip(texts.items(), results, strict=True)
    }


def _seen(text: str) -> str:
    """Mermaid's text as the page shows it: Mermaid keeps `#58;` as a placeholder
    (`ﬂ°°58¶ß`) until it writes the HTML, where it becomes `&#58;`, a `:`."""
    text = re.sub(r"ﬂ°°(\d+)¶ß", lambda m: chr(int(m.group(1))), text)
    return re.sub(r"ﬂ°(\w+)¶ß", lambda m: html.unescape(f"&{m.group(1)};"), text)


def test_docs_machines_has_mermaid_blocks() -> None:
    assert len(_doc_blocks()) >= len(MACHINES)


def test_mermaid_reads_every_text(drawn: dict[str, Drawn]) -> None:
    failed = {name: d.result["error"] for name, d in drawn.items() if d.result["error"]}
    assert failed == {}


def _shown(d: Drawn) -> tuple[View, Diagram]:
    assert d.view is not None
    return d.view, d.view.diagram


def _views(drawn: dict[str, Drawn]) -> list[Drawn]:
    return [d for d in drawn.values() if d.view is not None and not d.result["error"]]


def test_every_final_state_drawn_has_an_edge_to_an_end_marker(drawn: dict[str, Drawn]) -> None:
    checked = 0
    for d in _views(drawn):
        view, diagram = _shown(d)
        ends = {n["id"] for n in d.result["nodes"] if n["shape"] == "stateEnd"}
        edges = {(e["start"], e["end"]) for e in d.result["edges"]}
        for state in diagram.states:
            if state.kind is StateKind.FINAL and state.id in view.nodes:
                assert any((f"s{state.id}", end) in edges for end in ends), (d.name, state.path)
                checked += 1
    assert checked > 20


def test_every_targetless_transition_is_in_its_box_or_a_note_beside_it(
    drawn: dict[str, Drawn],
) -> None:
    checked = 0
    for d in _views(drawn):
        view, diagram = _shown(d)
        nodes = {n["id"]: n for n in d.result["nodes"]}
        notes_of: dict[str, list[str]] = {}
        for e in d.result["edges"]:
            target = nodes.get(e["end"])
            if target is not None and target["shape"] == "note":
                notes_of.setdefault(e["start"], []).append(target["label"])
        for state in diagram.states:
            if not (view.drawn(state.id) or state.id == view.focus == 0):
                continue
            for t in view.internal(state):
                if t.targets:
                    continue
                label = EdgeLabel(t.trigger, t.guard_text(), t.effects_text()).text()
                words = " ".join(label.split())  # what a reader sees, entity codes decoded
                if state.id == 0:
                    holder = "s0" if state.kind is StateKind.PARALLEL else "root_start"
                else:
                    holder = f"s{state.id}"
                box = [_seen(line) for line in nodes.get(holder, {}).get("description", [])]
                notes = _seen("\n".join(notes_of.get(holder, [])))
                assert words in box or words in notes.splitlines(), (d.name, state.path, words)
                checked += 1
    assert checked >= 10

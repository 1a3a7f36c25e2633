"""Parallel states in Mermaid text: separators (`--`) between regions unless an edge
starts or ends on a composite state inside them (mermaid-js/mermaid#4052 crashes the
layout then); without them the regions are dashed boxes and the name says `(parallel)`.
Checked on every view of every chart the diagram tests draw."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from chart_helpers import chart_of
from diagram_charts import parallel_root, sink, targetless
from layout_charts import COMPOSITES_IN_REGIONS, DEEP_NESTING
from node_tools import REPO

from statekit.compiler.ir import StateKind
from statekit.compiler.pipeline import compile_file
from statekit.diagrams.mermaid import PARALLEL_MARK, to_mermaid
from statekit.diagrams.model import Diagram, extract
from statekit.diagrams.views import Split, View, plan_views, whole_view


def _machine(path: Path) -> Callable[[], Diagram]:
    def load() -> Diagram:
        result = compile_file(str(path))
        assert result.chart is not None
        return extract(result.chart)

    return load


CHARTS: dict[str, Callable[[], Diagram]] = {
    "sink": sink,
    "targetless": targetless,
    "parallel_root": parallel_root,
    "composites_in_regions": lambda: extract(chart_of(COMPOSITES_IN_REGIONS)),
    "deep_nesting": lambda: extract(chart_of(DEEP_NESTING)),
    **{p.stem: _machine(p) for p in sorted((REPO / "machines").glob("*.yaml"))},
    **{p.stem: _machine(p) for p in sorted((REPO / "tests/charts/domain").glob("*.yaml"))},
}
_OPEN = re.compile(r'^\s*state "(.*)" as (s\d+) \{$')
_ARROW = re.compile(r"^\s*(\S+) --> (\S+)")


def _views() -> list[tuple[str, View]]:
    found = []
    for name, load in CHARTS.items():
        d = load()
        found.append((f"{name} (whole)", whole_view(d)))
        found += [(f"{name} ({v.title})", v) for v in plan_views(d, Split.ALWAYS)]
    return found


def _blocks(text: str) -> tuple[dict[str, str], dict[str, list[str]], dict[str, int], set[str]]:
    """From the text alone: each block's title, its enclosing blocks, the `--` lines
    directly in it, and the blocks an edge (not an initial marker) starts or ends on."""
    titles: dict[str, str] = {}
    around: dict[str, list[str]] = {}
    separators: dict[str, int] = {}
    ends: set[str] = set()
    stack: list[str] = []
    for line in text.splitlines():
        if opened := _OPEN.match(line):
            title, block = opened.groups()
            titles[block], around[block], separators[block] = title, list(stack), 0
            stack.append(block)
        elif line.strip() == "}":
            stack.pop()
        elif line.strip() == "--":
            separators[stack[-1]] += 1
        elif (arrow := _ARROW.match(line)) and "[*]" not in arrow.groups():
            ends.update(arrow.groups())
    return titles, around, separators, {e for e in ends if e in titles}


@pytest.mark.parametrize(("name", "view"), _views(), ids=lambda x: x if isinstance(x, str) else "")
def test_separators_are_dropped_exactly_around_composites_with_edges(name: str, view: View) -> None:
    text = to_mermaid(view)
    titles, around, separators, touched = _blocks(text)
    for state in view.diagram.states:
        block = f"s{state.id}"
        if state.kind is not StateKind.PARALLEL or block not in titles:
            continue
        regions = [c for c in state.children if view.drawn(c)]
        undivided = any(block in around[t] for t in touched)
        if undivided:
            assert titles[block].endswith(PARALLEL_MARK), (name, state.path)
            assert separators[block] == 0, (name, state.path)
            classed = re.search(r"^  class (\S+) region$", text, re.M)
            assert classed and {f"s{r}" for r in regions} <= set(classed[1].split(","))
        else:
            assert not titles[block].endswith(PARALLEL_MARK), (name, state.path)
            assert separators[block] == len(regions) - 1, (name, state.path)


def test_the_family_has_both_forms() -> None:
    texts = [to_mermaid(view) for _, view in _views()]
    assert sum(PARALLEL_MARK in t for t in texts) >= 3  # task, composites_in_regions
    assert sum("\n    --\n" in t or "\n      --\n" in t for t in texts) >= 5
    whole = to_mermaid(whole_view(extract(chart_of(COMPOSITES_IN_REGIONS))))
    assert f'"active{PARALLEL_MARK}"' in whole and f'"inner{PARALLEL_MARK}"' in whole
    assert '"calm" as' in whole

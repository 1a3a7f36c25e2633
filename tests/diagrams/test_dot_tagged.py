"""`to_dot(view, tagged=True)`: the same drawing with SVG classes on every state and
transition edge (the inspector highlights by them), for every reference machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import statekit
from statekit.diagrams.dot import to_dot
from statekit.diagrams.model import extract
from statekit.diagrams.views import EdgeKind, whole_view

MACHINES = sorted((Path(__file__).resolve().parents[2] / "machines").glob("*.yaml"))
_TAG = re.compile(r'(?:, class="(?:state s_\d+|transition(?: t_\d+)+)"| class="state s_\d+";)')


@pytest.mark.parametrize("path", MACHINES, ids=lambda p: p.stem)
def test_tagging_adds_classes_and_changes_nothing_else(path: Path) -> None:
    view = whole_view(extract(statekit.load(path).ir))
    plain, tagged = to_dot(view), to_dot(view, tagged=True)
    assert _TAG.sub("", tagged) == plain
    drawn = set(view.nodes) | set(view.clusters)
    states = {int(s) for s in re.findall(r'class="state s_(\d+)"', tagged)}
    assert states == drawn - {0}  # the root is the drawing itself
    edges = [e for e in view.edges if e.kind is EdgeKind.TRANSITION]
    tagged_edges = re.findall(r'class="transition((?: t_\d+)+)"', tagged)
    assert sorted(tagged_edges) == sorted(
        "".join(f" t_{t}" for t in edge.transitions) for edge in edges
    )

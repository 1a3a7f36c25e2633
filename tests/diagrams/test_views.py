"""Views of large charts (overview + one per composite) and the names of their files."""

from __future__ import annotations

from chart_helpers import chart_of
from diagram_charts import sink

from statekit.diagrams.dot import to_dot
from statekit.diagrams.model import Diagram, extract
from statekit.diagrams.outputs import drawings, safe_part, view_stem
from statekit.diagrams.views import (
    SPLIT_STATES,
    EdgeKind,
    Split,
    is_large,
    overview,
    plan_views,
    whole_view,
)


def grouped(groups: int, per_group: int = 10) -> Diagram:
    """`groups` compound states of `per_group` states, each pointing at the next group."""
    lines = ["statechart: big", "events: {GO: {}, HOP: {}}", "initial: g0", "states:"]
    for g in range(groups):
        lines += [f"  g{g}:", f"    initial: s{g}_0", "    states:"]
        for i in range(per_group):
            nxt = f"s{g}_{i + 1}" if i + 1 < per_group else f"s{(g + 1) % groups}_0"
            lines.append(f"      s{g}_{i}: {{on: {{GO: {nxt}, HOP: s{(g + 1) % groups}_{i}}}}}")
    return extract(chart_of("\n".join(lines) + "\n"))


def test_small_charts_get_one_view_with_everything() -> None:
    d = sink()
    assert not is_large(d)
    (view,) = plan_views(d)
    assert view.key == "" and view.labels
    assert all(s.id in view.nodes or s.id in view.clusters for s in d.states[1:])


def test_large_charts_get_an_overview_and_one_view_per_composite() -> None:
    d = grouped(12)
    assert len(d.states) > SPLIT_STATES and is_large(d)
    views = plan_views(d)
    assert [v.key for v in views] == ["", *(f"g{g}" for g in range(12))]
    assert len(plan_views(d, Split.NEVER)) == 1
    assert len(plan_views(sink(), Split.ALWAYS)) == 1 + 2  # work, par (regions go with par)


def test_overview_collapses_composites_and_labels_merged_edges_with_their_events() -> None:
    d = grouped(12)
    view = overview(d)
    assert view.collapsed == frozenset(view.nodes) and len(view.nodes) == 12
    assert not view.clusters and not view.labels
    transitions = [e for e in view.edges if e.kind is EdgeKind.TRANSITION]
    pairs = {(e.source, e.target) for e in transitions}
    assert len(pairs) == len(transitions) == 12  # g_i -> g_(i+1), GO and HOP merged
    assert all(e.label is None and "GO" in e.tooltip and "HOP" in e.tooltip for e in transitions)
    assert all(e.events == ("HOP", "GO") for e in transitions)
    dot = to_dot(view)
    assert "<B>GO</B>" not in dot and 'tooltip="HOP\\nGO"' in dot
    assert sum(">HOP, GO</TD>" in line for line in dot.splitlines()) == 12  # events kept
    assert "10 states inside" in dot


def test_composite_view_draws_outside_ends_as_stubs() -> None:
    d = grouped(12)
    g3 = next(s for s in d.states if s.path == "g3")
    view = next(v for v in plan_views(d) if v.key == "g3")
    assert view.clusters == {g3.id}
    assert {d.states[s].path for s in view.stubs} == {"g2", "g4"}
    dot = to_dot(view)
    assert f"subgraph cluster_{g3.id} {{" in dot
    assert "(to s4_0)" in dot  # an edge to a stub names the real target
    assert 'label=<g4>, tooltip="outside: g4"' in dot


def test_file_names_of_views_are_safe_and_stable() -> None:
    assert safe_part("lifecycle") == "lifecycle"
    assert safe_part("a-b_c") == "a-b_c"
    odd = safe_part('q"uote')
    assert odd.startswith("q_uote-") and len(odd) == len("q_uote-") + 8
    assert safe_part('q"uote') != safe_part("q'uote")
    assert safe_part("é") != safe_part("ü")
    d = grouped(12)
    stems = [dr.stem for dr in drawings(d, "big")]
    assert stems[:3] == ["big", "big.g0", "big.g1"]
    assert view_stem("task", whole_view(sink())) == "task"

"""The DOT text: clusters, regions, pseudo-states, edge ends on clusters, labels, escaping."""

from __future__ import annotations

import re

from diagram_charts import label_lines, labels, odd, sink

from statekit.diagrams.dot import WRAP, html, quoted, to_dot, wrap_lines
from statekit.diagrams.dot_text import LONGEST_WORD
from statekit.diagrams.model import Diagram, EffectDetail
from statekit.diagrams.views import whole_view


def dot_of(d: Diagram) -> str:
    return to_dot(whole_view(d))


def sid(d: Diagram, path: str) -> int:
    return next(s.id for s in d.states if s.path == path)


def cluster_block(dot: str, state_id: int) -> str:
    """The text of `subgraph cluster_<id> { ... }` (balanced braces)."""
    start = dot.index(f"subgraph cluster_{state_id} {{")
    depth = 0
    for i in range(start, len(dot)):
        if dot[i] == "{":
            depth += 1
        elif dot[i] == "}":
            depth -= 1
            if depth == 0:
                return dot[start : i + 1]
    raise AssertionError("unbalanced")


def edge_lines(dot: str, tail: str, head: str) -> list[str]:
    return [
        line.strip() for line in dot.splitlines() if line.strip().startswith(f"{tail} -> {head}")
    ]


def test_compound_states_are_rounded_clusters_with_their_name() -> None:
    d = sink()
    work = cluster_block(dot_of(d), sid(d, "work"))
    assert 'style="rounded,filled"' in work.split("\n")[1]
    assert "<B>work</B>" in work
    assert "entry / assign 1" in work  # entry effects inside the cluster's label


def test_regions_are_dashed_clusters_inside_their_parallel_state() -> None:
    d = sink()
    dot = dot_of(d)
    par = cluster_block(dot, sid(d, "work.par"))
    for region in ("work.par.left", "work.par.right"):
        block = cluster_block(par, sid(d, region))
        assert 'style="rounded,dashed,filled"' in block.split("\n")[1]
    assert "dashed" not in par.split("\n")[1]  # the parallel state itself


def test_regions_stay_side_by_side_in_document_order() -> None:
    d = sink()
    par = cluster_block(dot_of(d), sid(d, "work.par"))
    left, right = sid(d, "work.par.left"), sid(d, "work.par.right")
    assert f"{{rank=same; h{left}; h{right};}}" in par
    assert f"h{left} -> h{right} [style=invis];" in par
    assert f"h{left} -> i{left} [style=invis];" in par


def test_an_initial_dot_per_compound_state_and_region() -> None:
    d = sink()
    dot = dot_of(d)
    compounds = ["", "work", "work.par.left", "work.par.right"]
    for path in compounds:
        state_id = sid(d, path)
        assert f'i{state_id} [shape=point, width=0.11, label="", fillcolor=' in dot
        target = d.states[state_id].initial[0]
        assert f"i{state_id} -> s{target};" in dot
    assert f"i{sid(d, 'work.par')} [" not in dot  # a parallel state has no initial state


def test_final_states_are_double_circles_and_history_an_h_circle() -> None:
    d = sink()
    dot = dot_of(d)
    assert re.search(rf"s{sid(d, 'done')} \[shape=doublecircle\b", dot)
    assert re.search(rf"s{sid(d, 'work.end')} \[shape=doublecircle\b", dot)
    assert f's{sid(d, "work.again")} [shape=circle, label="H*"' in dot
    # the history default is a dashed edge to the parent's initial state
    assert f"s{sid(d, 'work.again')} -> s{sid(d, 'work.step')} [style=dashed" in dot


def test_edges_start_and_end_on_clusters() -> None:
    d = sink()
    dot = dot_of(d)
    work, par = sid(d, "work"), sid(d, "work.par")
    # idle --GO--> work: the edge ends on the cluster's border, aimed at its initial dot
    into_work = [x for x in dot.splitlines() if f"-> i{work} [" in x and "lhead" in x]
    assert into_work and f"lhead=cluster_{work}" in into_work[0]
    # work --BACK--> idle: starts on the border of `work`
    out_of_work = [x for x in dot.splitlines() if f"i{work} -> " in x and "ltail" in x]
    assert any(f"ltail=cluster_{work}" in x for x in out_of_work)
    # step --GO [small]--> par: aimed at the parallel state's spine, clipped at its border
    assert any(f"lhead=cluster_{par}" in x for x in dot.splitlines())
    assert "compound=true" in dot


def test_edge_labels_read_event_guard_effects() -> None:
    d = sink()
    dot = dot_of(d)
    assert "<B>GO</B>" in dot and "<B>always</B>" in dot and "<B>done</B>" in dot
    texts = labels(dot)
    assert "GO [small]" in texts and "always [ctx.n > 5]" in texts and "done" in texts
    # the event alone on its first line, bold: no line mixes two fonts
    assert '<TD ALIGN="LEFT"><B>GO</B></TD></TR><TR><TD ALIGN="LEFT">[small]</TD>' in dot


def test_long_labels_are_wrapped() -> None:
    d = sink()
    dot = dot_of(d)
    long = next(x for x in dot.splitlines() if "<B>LONG</B>" in x)
    lines = label_lines(long)
    assert len(lines) >= 3
    text = "".join(lines)
    assert len(text) > 100  # a label over 100 characters...
    assert all(len(line) <= LONGEST_WORD for line in lines)  # ...in short lines
    assert sum(len(line) <= WRAP for line in lines) >= 2  # words wrap at WRAP


def test_wrap_lines_keeps_every_character_and_the_width() -> None:
    text = "x" * 100 + " a bb " + "y" * 7
    lines = wrap_lines(text, 36)
    assert all(len(line) <= 36 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert wrap_lines("", 10) == [""]


def test_multi_target_transitions_draw_one_edge_and_name_the_others() -> None:
    d = sink()
    dot = dot_of(d)
    assert "(also enters d)" in dot
    assert sum("<B>SPLIT</B>" in line for line in dot.splitlines()) == 1


def test_targetless_transitions_are_listed_inside_the_state() -> None:
    d = sink()
    work = cluster_block(dot_of(d), sid(d, "work"))
    assert "PING / assign 1" in work  # effects summarised by default
    full = to_dot(whole_view(d, EffectDetail.FULL))
    assert "PING / assign n" in cluster_block(full, sid(d, "work"))


def test_classification_table_and_invariants_note() -> None:
    dot = dot_of(sink())
    assert "<B>already / reject</B>" in dot
    assert "NOT_STARTED: BACK" in dot and "IDLE: *" in dot and "already: PING" in dot
    assert "<B>invariants</B>" in dot
    assert "when par: require left, right" in dot
    without = to_dot(whole_view(sink()), classifications=False, invariants=False)
    assert "already / reject" not in without and "<B>invariants</B>" not in without


def test_odd_names_are_escaped() -> None:
    d = odd()
    dot = dot_of(d)
    assert "<B>q&quot;uote</B>" in dot
    assert "<B>café</B>" in dot and "<B>a-b</B>" in dot
    assert "<B>&lt;i&gt;</B>" in dot
    assert "<B>&lt;b&gt;&amp;amp;|`</B>" in dot
    assert "<B>say&quot;hi&quot;</B>" in dot
    assert "<B>100%%</B>" in dot and "<B>#35;</B>" in dot
    assert 'digraph "odd-names" {' in dot
    # nothing from the chart outside an escaped label: every quote in the text is balanced
    for line in dot.splitlines():
        assert line.count('"') % 2 == 0, line


def test_escaping_helpers() -> None:
    assert html('a<b>&"c"\n') == "a&lt;b&gt;&amp;&quot;c&quot; "
    assert quoted('say "hi"\\n') == '"say \\"hi\\"\\\\n"'
    assert quoted("two\nlines") == '"two\\nlines"'


def test_same_chart_same_bytes() -> None:
    assert dot_of(sink()) == dot_of(sink())
    assert dot_of(odd()) == dot_of(odd())


def test_edges_between_regions_do_not_constrain_ranks() -> None:
    from chart_helpers import chart_of

    from statekit.diagrams.model import extract

    d = extract(
        chart_of(
            """
            statechart: regions
            events: {GO: {}}
            parallel: true
            states:
              a:
                initial: a1
                states:
                  a1: {on: {GO: b.b2}}
              b:
                initial: b1
                states:
                  b1: {}
                  b2: {}
            """
        )
    )
    dot = dot_of(d)
    line = next(x for x in dot.splitlines() if "<B>GO</B>" in x)
    assert "constraint=false" in line

"""The Mermaid stateDiagram-v2 text: composites, regions, initial and end markers, targetless
transitions, escaping, lifting."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from chart_helpers import chart_of
from diagram_charts import odd, parallel_root, sink, targetless

from statekit.compiler.ir import StateKind
from statekit.diagrams.mermaid import escape, to_mermaid
from statekit.diagrams.model import Diagram, extract
from statekit.diagrams.views import EdgeLabel, overview, whole_view


def mermaid_of(d: Diagram) -> str:
    return to_mermaid(whole_view(d))


def sid(d: Diagram, path: str) -> int:
    return next(s.id for s in d.states if s.path == path)


def test_structure_of_composites_regions_and_initial_states() -> None:
    d = sink()
    text = mermaid_of(d)
    assert text.startswith("stateDiagram-v2\n")
    work, par = sid(d, "work"), sid(d, "work.par")
    assert f'state "work" as s{work} {{' in text
    assert f'state "par" as s{par} {{' in text
    par_block = text[text.index(f'state "par" as s{par} {{') :]
    left, right = sid(d, "work.par.left"), sid(d, "work.par.right")
    assert (
        par_block.index(f"as s{left} {{")
        < par_block.index("--")
        < par_block.index(f"as s{right} {{")
    )
    assert f"[*] --> s{sid(d, 'idle')}" in text
    assert f"[*] --> s{sid(d, 'work.step')}" in text
    assert f'state "H*" as s{sid(d, "work.again")}' in text
    assert f"class s{sid(d, 'work.end')},s{sid(d, 'done')} final" in text


def test_labels_are_event_and_guard() -> None:
    d = sink()
    text = mermaid_of(d)
    assert f"s{sid(d, 'work.step')} --> s{sid(d, 'work.par')} : GO [small]" in text
    assert "always [ctx.n > 5]" in text.replace("#62;", ">")


def test_edges_across_composites_are_drawn_between_the_composites() -> None:
    d = sink()
    text = mermaid_of(d)
    # finished --BACK--> work.again (a history state inside `work`): drawn to `work`
    assert f"s{sid(d, 'finished')} --> s{sid(d, 'work')} : BACK (to again)" in text
    # every edge joins two states declared in the same block
    blocks: dict[str, set[str]] = {}
    stack = ["top"]
    for raw in text.splitlines()[1:]:
        line = raw.strip()
        if line.startswith("state ") and line.endswith("{"):
            name = line.split(" as ")[1].rstrip(" {")
            blocks.setdefault(stack[-1], set()).add(name)
            stack.append(name)
        elif line == "}":
            stack.pop()
        elif line.startswith("state "):
            blocks.setdefault(stack[-1], set()).add(line.split(" as ")[1])
        elif " --> " in line and "[*]" not in line:
            tail, rest = line.split(" --> ")
            head = rest.split(" : ")[0]
            assert {tail, head} <= blocks.get(stack[-1], set()), line


def test_edges_between_regions_are_left_out() -> None:
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
    text = mermaid_of(d)
    assert "GO" not in text
    assert 'state "regions" as s0 {' in text and "[*] --> s0" in text


def test_odd_names_are_escaped() -> None:
    d = odd()
    text = mermaid_of(d)
    assert 'state "q#34;uote" as s1' in text
    assert 'state "caf\u00e9" as s2' in text
    assert 'state "#60;i#62;" as s4' in text
    assert 'state "#123;x#125;" as s5' in text
    assert ": say#34;hi#34;" in text
    assert ": a#58;b#59;c" in text
    assert ": 100#37;#37;" in text
    assert ": #35;35#59;" in text
    assert ": #60;b#62;#38;amp#59;|`" in text
    # Mermaid replaces entity codes before parsing; after that, no character of a
    # label may be one its grammar reads as syntax
    for line in text.splitlines():
        if " : " in line:
            label = re.sub(r"#\w+;", "", line.split(" : ", 1)[1])
            assert not set(label) & set(':;"%<>{}#'), line


def test_escape_direction_word_and_whitespace() -> None:
    assert escape("change direction LR now") == "change directio#110; LR now"
    assert escape("a\n  b") == "a b"
    assert escape("plain") == "plain"


def test_same_chart_same_bytes() -> None:
    assert mermaid_of(sink()) == mermaid_of(sink())


# --- end markers and targetless transitions ----------------------------------------

MERMAID_CHARTS: dict[str, Callable[[], Diagram]] = {
    "sink": sink,
    "odd": odd,
    "targetless": targetless,
    "parallel_root": parallel_root,
}


def blocks_of(text: str) -> dict[str, list[str]]:
    """Block name (`top` or the composite's Mermaid id) → its own lines, nested ones left out."""
    blocks: dict[str, list[str]] = {"top": []}
    stack = ["top"]
    in_note = False
    for raw in text.splitlines()[1:]:
        line = raw.strip()
        if in_note:
            in_note = line != "end note"
            blocks[stack[-1]].append(line)
            continue
        if line.startswith("note ") and " : " not in line:
            in_note = True
        if line.startswith("state ") and line.endswith("{"):
            blocks[stack[-1]].append(line)
            stack.append(line.split(" as ")[1].rstrip(" {"))
            blocks[stack[-1]] = []
        elif line == "}":
            stack.pop()
        else:
            blocks[stack[-1]].append(line)
    return blocks


def block_declaring(blocks: dict[str, list[str]], name: str) -> str:
    return next(
        block
        for block, lines in blocks.items()
        if any(re.fullmatch(rf'state ".*" as {name}( \{{)?', line) for line in lines)
    )


def internal_text(d: Diagram, tid: int) -> str:
    t = d.transitions[tid]
    return escape(EdgeLabel(t.trigger, t.guard_text(), t.effects_text()).text())


@pytest.mark.parametrize("chart", sorted(MERMAID_CHARTS))
def test_every_final_state_has_one_end_marker_in_its_block(chart: str) -> None:
    d = MERMAID_CHARTS[chart]()
    text = mermaid_of(d)
    blocks = blocks_of(text)
    finals = [s for s in d.states if s.kind is StateKind.FINAL]
    for state in finals:
        marker = f"s{state.id} --> [*]"
        assert text.count(marker + "\n") == 1, (state.path, text)
        assert marker in blocks[block_declaring(blocks, f"s{state.id}")], state.path
    assert text.count("--> [*]") == len(finals)


@pytest.mark.parametrize("chart", sorted(MERMAID_CHARTS))
def test_every_targetless_transition_is_listed_once_beside_its_state(chart: str) -> None:
    d = MERMAID_CHARTS[chart]()
    text = mermaid_of(d)
    blocks = blocks_of(text)
    targetless = [t for t in d.transitions if not t.targets]
    for t in targetless:
        words = internal_text(d, t.id)
        assert text.count(words + "\n") == 1, (words, text)
        source = d.states[t.source]
        if t.source == 0:  # the compound root: a note on its initial marker
            place = "note right of [*]" if source.kind is StateKind.COMPOUND else "note right of s0"
            lines = blocks["top"]
            assert lines[lines.index(place) + 1 :].index(words) < lines[lines.index(place) :].index(
                "end note"
            )
        elif source.is_composite:
            lines = blocks[block_declaring(blocks, f"s{t.source}")]
            start = lines.index(f"note right of s{t.source}")
            assert words in lines[start : lines.index("end note", start)]
        else:
            lines = blocks[block_declaring(blocks, f"s{t.source}")]
            assert f"s{t.source} : {words}" in lines
    if chart == "targetless":
        assert len(targetless) == 5


def test_a_targetless_text_never_closes_its_note() -> None:
    # Mermaid ends a note at the first line that starts with `end note`
    text = mermaid_of(targetless())
    assert "'end note'" in text
    closing = [line for line in text.splitlines() if line.strip().startswith("end note")]
    assert closing == [line for line in closing if line.strip() == "end note"]
    assert len(closing) == text.count("\n  note right of ") + text.count("\n    note right of ")
    assert "a#58;b#59;c" in text and "50#37;#37;" in text


def test_an_overview_lists_no_targetless_transitions() -> None:
    # as in the DOT overview: composites collapsed, labels left out
    text = to_mermaid(overview(targetless()))
    assert "note right of" not in text and " : " not in text.split("classDef")[0]

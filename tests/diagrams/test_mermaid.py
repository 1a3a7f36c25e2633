"""The Mermaid stateDiagram-v2 text: composites, regions, initial states, escaping, lifting."""

from __future__ import annotations

import re

from chart_helpers import chart_of
from diagram_charts import odd, sink

from statekit.diagrams.mermaid import escape, to_mermaid
from statekit.diagrams.model import Diagram, extract
from statekit.diagrams.views import whole_view


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
        elif " --> " in line and not line.startswith("[*]"):
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

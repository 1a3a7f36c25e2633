"""Pass 1: states numbered in document order with paths and kinds; the checks a kind implies."""

from __future__ import annotations

from chart_helpers import chart_of, compile_text, only
from model_charts import NESTED

from statekit.compiler.ir import StateKind


def test_states_are_numbered_in_document_order_with_paths_and_kinds() -> None:
    chart = chart_of(NESTED)
    paths = [s.path for s in chart.states]
    assert paths == [
        "",
        "a",
        "a.b",
        "a.b.c",
        "a.b.d",
        "a.h",
        "p",
        "p.left",
        "p.left.x",
        "p.left.y",
        "p.right",
        "p.right.x",
        "p.right.z",
        "out",
    ]
    assert [s.id for s in chart.states] == list(range(len(paths)))
    assert chart.state("a").kind is StateKind.COMPOUND
    assert chart.state("p").kind is StateKind.PARALLEL
    assert chart.state("a.h").kind is StateKind.HISTORY
    assert chart.state("p.left.y").kind is StateKind.FINAL
    assert chart.state("a.b.c").kind is StateKind.ATOMIC
    c = chart.state("a.b.c")
    assert c.ancestors == (chart.path_index["a.b"], chart.path_index["a"], 0)
    assert c.depth == 3
    assert chart.state("a").last_descendant == chart.path_index["a.h"]
    assert chart.state("a").history_children == (chart.path_index["a.h"],)
    assert chart.path_index["a.h"] not in chart.state("a").children


def test_history_state_cannot_have_transitions() -> None:
    result = compile_text(NESTED.replace("h: {history: deep}", "h: {history: deep, on: {GO: c}}"))
    d = only(result, "schema")
    assert "may only have history, default and description" in d.message
    assert (d.span.line, d.span.column) == (16, 26)


def test_done_on_the_root_is_refused() -> None:
    d = only(compile_text(NESTED + "done: out\n"), "schema")
    assert "'done' on the root" in d.message


def test_states_named_like_yaml_booleans_stay_names() -> None:
    chart = chart_of(
        """
        statechart: switch
        events: {on: {}, off: {}}
        initial: off
        states:
          off: {on: {on: on}}
          on: {on: {off: off}}
        """
    )
    assert [s.path for s in chart.states] == ["", "off", "on"]
    assert set(chart.candidates[1]) == {"on"}


def test_done_on_an_atomic_state_is_refused() -> None:
    d = only(compile_text(NESTED.replace("  out: {final: true}", "  out: {done: a}")), "schema")
    assert "never fires" in d.message
    assert (d.span.line, d.span.column) == (31, 9)

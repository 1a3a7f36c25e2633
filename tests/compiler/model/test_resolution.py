"""Pass 2: references, initials, transitions, guards and effects, and their diagnostics."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text, only
from model_charts import NESTED

from statekit.compiler.ir import TransitionKind


def test_history_default_is_the_parents_initial_when_not_given() -> None:
    chart = chart_of(NESTED)
    assert chart.state("a.h").history_default == (chart.path_index["a.b"],)


def test_references_resolve_by_unique_suffix() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    go_from_c = chart.transitions[chart.state("a.b.c").transitions[0]]
    assert go_from_c.targets == (ids["a.b.d"],)
    back = chart.transitions[chart.state("a.b.d").transitions[0]]
    assert back.targets == (ids["a.b.c"],)


def test_done_transitions_listen_to_done_state_events() -> None:
    chart = chart_of(NESTED)
    done = [t for t in chart.transitions if t.kind is TransitionKind.DONE]
    assert [t.event for t in done] == ["done.state.p"]


def test_guards_keep_names_reasons_and_order() -> None:
    chart = chart_of(
        """
        statechart: g
        context: {budget: {type: integer, default: 3}}
        events: {GO: {n: integer}}
        guards:
          positive: {if: event.n > 0, else: NOT_POSITIVE}
          small: event.n < ctx.budget
        initial: a
        states:
          a:
            on:
              GO:
                - {to: b, guard: [positive, small], if: event.n != 2, else: NOT_TWO}
                - b
          b: {}
        """
    )
    first = chart.transitions[0]
    assert [(g.name, g.reason) for g in first.guards] == [
        ("positive", "NOT_POSITIVE"),
        ("small", "GUARD_FAILED"),
        (None, "NOT_TWO"),
    ]
    assert first.guards[0].expression.evaluate({}, {"n": 1}, frozenset()) is True
    assert chart.candidates[1]["GO"] == (0, 1)


def test_ambiguous_reference_lists_candidates() -> None:
    result = compile_text(NESTED.replace("done: out", "done: x"))
    d = only(result, "ambiguous-state")
    assert (d.span.line, d.span.column) == (30, 11)
    assert "candidate: p.left.x (from here: '.left.x')" in d.notes
    assert "candidate: p.right.x (from here: '.right.x')" in d.notes


def test_unknown_state_suggests_a_close_name() -> None:
    d = only(compile_text(NESTED.replace("done: out", "done: ot")), "unknown-state")
    assert (d.span.line, d.span.column) == (30, 11)
    assert d.notes == ("did you mean 'out'?",)


@pytest.mark.parametrize(
    ("old", "new", "line", "column", "needle"),
    [
        ("    initial: b\n", "", 8, 3, "needs 'initial'"),
        ("    initial: b\n", "    initial: q\n", 9, 14, "not a child"),
        ("    initial: b\n", "    initial: h\n", 9, 14, "history state"),
        (
            "    parallel: true\n",
            "    parallel: true\n    initial: left\n",
            21,
            5,
            "remove 'initial'",
        ),
        ("  out: {final: true}", "  out: {initial: x}", 31, 9, "no child states"),
        (
            "      h: {history: deep}",
            "      h: {history: deep, default: p.left.x}",
            16,
            35,
            "inside 'a'",
        ),
    ],
)
def test_invalid_initial(old: str, new: str, line: int, column: int, needle: str) -> None:
    assert old in NESTED
    d = only(compile_text(NESTED.replace(old, new, 1)), "invalid-initial")
    assert (d.span.line, d.span.column) == (line, column)
    assert needle in d.message


def test_unknown_event_in_on_already_reject_and_raise() -> None:
    result = compile_text(
        """
        statechart: e
        events: {GO: {}}
        initial: a
        states:
          a:
            on: {GOO: a}
            already: [GOT]
            reject: {GONE: NOPE, "*": ILLEGAL}
            entry: [{raise: GOING}]
        """
    )
    found = [(d.span.line, d.span.column) for d in result.diagnostics if d.slug == "unknown-event"]
    assert found == [(6, 10), (7, 15), (8, 14), (9, 21)]
    assert result.chart is None


def test_unknown_guard() -> None:
    d = only(
        compile_text(
            """
            statechart: g
            events: {GO: {}}
            guards: {ready: "true"}
            initial: a
            states:
              a: {on: {GO: {to: a, guard: redy}}}
            """
        ),
        "unknown-guard",
    )
    assert (d.span.line, d.span.column) == (6, 31)
    assert "declared guards: ready" in d.notes


def test_targets_in_one_region_are_invalid() -> None:
    result = compile_text(
        NESTED.replace("      FIX: {to: p,", "      FIX: {to: [p.left.x, p.left.y],")
    )
    d = only(result, "invalid-target")
    assert (d.span.line, d.span.column) == (18, 18)
    ok = compile_text(
        NESTED.replace("      FIX: {to: p,", "      FIX: {to: [p.left.y, p.right.z],")
    )
    assert ok.chart is not None


def test_guard_type_errors_name_the_using_event() -> None:
    result = compile_text(
        """
        statechart: g
        events: {GO: {n: string}, STOP: {n: integer}}
        guards: {positive: {if: event.n > 0, else: NOT_POSITIVE}}
        initial: a
        states:
          a: {on: {GO: {to: a, guard: positive}, STOP: {to: a, guard: positive}}}
        """
    )
    d = only(result, "expression-type")
    assert (d.span.line, d.span.column) == (3, 25)
    assert "used by a transition on GO" in d.notes


def test_context_field_needs_a_typed_default() -> None:
    result = compile_text(
        """
        statechart: c
        context:
          n: {type: integer}
          m: {type: integer, default: "x"}
          ok: integer
          maybe: {type: string, nullable: true}
        initial: a
        states: {a: {}}
        """
    )
    found = sorted((d.span.line, d.message) for d in result.diagnostics if d.slug == "schema")
    assert [line for line, _ in found] == [3, 4]
    assert "needs a default" in found[0][1] and "is not integer" in found[1][1]


def test_assign_and_raise_are_type_checked() -> None:
    result = compile_text(
        """
        statechart: fx
        context: {n: integer, s: {type: string, nullable: true, default: null}}
        events: {GO: {k: integer}, PING: {id: string}}
        initial: a
        states:
          a:
            on:
              GO:
                to: a
                do:
                  - assign: {n: event.k + 1, s: event.k, missing: 1}
                  - raise: {event: PING, payload: {id: 3}}
                  - raise: PING
        """
    )
    messages = [(d.span.line, d.message) for d in result.diagnostics]
    assert any(line == 11 and "ctx.s" in m for line, m in messages)
    assert any(line == 11 and "unknown context field 'missing'" in m for line, m in messages)
    assert any(line == 12 and "payload field 'id'" in m for line, m in messages)
    assert any(line == 13 and "missing payload field(s): id" in m for line, m in messages)


def test_history_states_cannot_be_tested_for_activity() -> None:
    text = (
        NESTED.replace("FIX: {to: p, if: event.n > 0,", "FIX: {to: p, if: \"active('a.h')\",")
        + "invariants:\n  never: {when: a.h, require: a}\n"
    )
    result = compile_text(text)
    found = [(d.span.line, d.message) for d in result.diagnostics if d.slug == "unknown-state"]
    assert len(found) == 2
    assert all("history pseudo-state, which is never active" in m for _, m in found)
    assert [line for line, _ in found] == [18, 33]


@pytest.mark.parametrize("indicator", [">-", ">", "|", "|-", "|+"])
def test_an_expression_in_a_block_scalar_is_reported_at_its_token(indicator: str) -> None:
    result = compile_text(
        f"""
        statechart: blocks
        context: {{n: integer}}
        events: {{GO: {{}}}}
        initial: a
        states:
          a:
            on:
              GO:
                to: b
                if: {indicator}
                  ctx.n > 0 and ctx.missing
          b: {{}}
        """
    )
    d = only(result, "expression-type")
    assert "unknown context field 'missing'" in d.message
    assert (d.span.line, d.span.column, d.span.end_line, d.span.end_column) == (11, 25, 11, 36)

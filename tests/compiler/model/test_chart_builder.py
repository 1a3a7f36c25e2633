"""Model → IR: states, references, transitions, tables, and the diagnostics of the resolver."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest
from chart_helpers import chart_of, compile_text, only

from statekit.compiler.ir import StateKind, TransitionKind
from statekit.compiler.serialize import chart_to_json

NESTED = """
statechart: nested
events:
  GO: {}
  BACK: {}
  FIX: {n: integer}
initial: a
states:
  a:
    initial: b
    states:
      b:
        initial: c
        states:
          c: {on: {GO: d}}
          d: {on: {BACK: a.b.c}}
      h: {history: deep}
    on:
      FIX: {to: p, if: event.n > 0, else: NOT_POSITIVE}
  p:
    parallel: true
    states:
      left:
        initial: x
        states: {x: {on: {GO: y}}, y: {final: true}}
      right:
        initial: x
        states: {x: {}, z: {}}
    on:
      BACK: a.h
    done: out
  out: {final: true}
"""


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


def test_default_entry_follows_initials_and_enters_every_region() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    assert chart.state("a").default_entry == (ids["a"], ids["a.b"], ids["a.b.c"])
    assert chart.state("p").default_entry == (
        ids["p"],
        ids["p.left"],
        ids["p.left.x"],
        ids["p.right"],
        ids["p.right.x"],
    )
    assert chart.root.default_entry[1:] == (ids["a"], ids["a.b"], ids["a.b.c"])


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


def test_transition_domain_and_static_entry_set() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    fix = chart.transitions[chart.state("a").transitions[0]]
    assert fix.domain == 0
    assert fix.entry_set == chart.state("p").default_entry
    inner = chart.transitions[chart.state("a.b.c").transitions[0]]
    assert inner.domain == ids["a.b"]
    assert inner.entry_set == (ids["a.b.d"],)
    to_history = chart.transitions[chart.state("p").transitions[0]]
    assert to_history.targets_history
    assert to_history.domain is None and to_history.entry_set is None


def test_done_transitions_listen_to_done_state_events() -> None:
    chart = chart_of(NESTED)
    done = [t for t in chart.transitions if t.kind is TransitionKind.DONE]
    assert [t.event for t in done] == ["done.state.p"]


def test_candidates_list_own_then_ancestor_transitions_in_order() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    table = chart.candidates[ids["a.b.c"]]
    assert [chart.transitions[t].source for t in table["GO"]] == [ids["a.b.c"]]
    assert [chart.transitions[t].source for t in table["FIX"]] == [ids["a"]]
    x = chart.candidates[ids["p.left.x"]]
    assert [chart.transitions[t].source for t in x["BACK"]] == [ids["p"]]
    assert "GO" not in chart.candidates[ids["p.right.x"]]


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


def test_ir_is_frozen() -> None:
    chart = chart_of(NESTED)
    with pytest.raises(FrozenInstanceError):
        chart.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        chart.candidates[1]["NEW"] = ()  # type: ignore[index]


def test_digest_ignores_layout_comments_and_descriptions_but_not_behaviour() -> None:
    base = chart_of(NESTED)
    relaid = chart_of(
        "# a comment\n"
        + NESTED.replace(
            "  out: {final: true}", "  out:\n    final: true\n    description: the end"
        )
    )
    assert relaid.digest == base.digest
    changed = chart_of(NESTED.replace("done: out", "done: a"))
    assert changed.digest != base.digest
    assert base.digest.startswith("sha256:") and len(base.digest) == 71


def test_ir_json_is_stable_and_complete() -> None:
    chart = chart_of(NESTED)
    data = chart_to_json(chart)
    assert data["statechart"] == "nested"
    assert len(data["states"]) == len(chart.states)
    assert data["states"][1]["span"][:2] == [8, 3]
    assert chart_to_json(chart_of(NESTED)) == data


def test_ambiguous_reference_lists_candidates() -> None:
    result = compile_text(NESTED.replace("done: out", "done: x"))
    d = only(result, "ambiguous-state")
    assert (d.span.line, d.span.column) == (30, 11)
    assert "candidate: p.left.x" in d.notes and "candidate: p.right.x" in d.notes


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


def test_done_on_an_atomic_state_is_refused() -> None:
    d = only(compile_text(NESTED.replace("  out: {final: true}", "  out: {done: a}")), "schema")
    assert "never fires" in d.message
    assert (d.span.line, d.span.column) == (31, 9)


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

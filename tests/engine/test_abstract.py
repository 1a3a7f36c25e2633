"""Abstract execution: macrosteps with guards decided by an oracle and no data, as records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chart_helpers import chart_of, machine

from statekit.compiler.ir import GuardCheck, Transition
from statekit.engine.abstract import (
    AbstractValue,
    abstract_initial_macrostep,
    abstract_macrostep,
    classify_unselected,
    data_free_macrostep,
)
from statekit.engine.result import UNDEFINED_TRANSITION, Status
from statekit.engine.tables import NoCandidates, StaticMacrostep, Tables

EFFECTS = """
statechart: effects
context: {n: integer}
events: {GO: {d: integer}, PING: {}}
initial: a
states:
  a:
    on:
      GO:
        to: b
        do:
          - assign: {n: "ctx.n // event.d"}
          - emit: {type: Out, payload: {q: "ctx.n // event.d"}}
          - raise: PING
  b:
    on: {PING: c}
  c: {}
"""

CONFLICT = """
statechart: conflict
events: {GO: {}}
parallel: true
states:
  p:
    initial: p1
    states: {p1: {on: {GO: q.q2}}, p2: {}}
  q:
    initial: q1
    states: {q1: {on: {GO: p.p2}}, q2: {}}
"""


def _always(answer: bool, asked: list[str]) -> Any:
    def oracle(
        check: GuardCheck,
        transition: Transition,
        ctx: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> bool:
        asked.append(check.expression.source)
        return answer

    return oracle


def test_an_abstract_macrostep_evaluates_no_effect_but_runs_raised_events() -> None:
    tables = Tables(chart_of(EFFECTS))
    a = tables.configuration(frozenset({tables.chart.path_index["a"]}))
    context = {"n": 1}
    run = abstract_macrostep(tables, a, {}, context, "GO", _always(True, []))
    assert run.fired and not run.livelock and run.failed_guard is None
    assert run.target.paths == {"c"}
    assert run.selected_for == ("GO", "PING")
    assert [p.entered for p in run.plans] == [("b",), ("c",)]
    assert context == {"n": 1} and run.conflicts == ()


def test_abstract_values_are_new_objects_so_identity_tells_a_change() -> None:
    first, second = AbstractValue(), AbstractValue()
    assert first is not second and repr(first) == "<abstract>"


def test_guards_are_decided_by_the_oracle_and_a_failure_is_reported() -> None:
    tables = Tables(
        chart_of("""
        statechart: g
        context: {n: integer}
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: {to: b, if: ctx.n > 0}}}
          b: {}
        """)
    )
    a = tables.configuration(frozenset({tables.chart.path_index["a"]}))
    asked: list[str] = []
    run = abstract_macrostep(tables, a, {}, {"n": 5}, "GO", _always(False, asked))
    assert asked == ["ctx.n > 0"]
    assert not run.fired and run.failed_guard is not None and run.target is a
    assert run.plans == ()


def test_conflicts_come_back_with_their_exits_and_reason() -> None:
    tables = Tables(chart_of(CONFLICT))
    index = tables.chart.path_index
    start = tables.configuration(frozenset(index[p] for p in ("p", "p.p1", "q", "q.q1")))
    run = abstract_macrostep(tables, start, {}, {}, "GO", _always(True, []))
    (conflict,) = run.conflicts
    assert conflict.configuration is start and conflict.kept == conflict.enabled[:1]
    (loss,) = conflict.losses
    assert loss.kept == conflict.kept[0] and loss.by_document_order
    assert {tables.states[s].path for s in loss.common_exits} >= {"p", "q"}
    assert run.target.paths == {"p", "p.p1", "q", "q.q2"}
    again = abstract_macrostep(tables, start, {}, {}, "GO", _always(True, []))
    assert again.conflicts == run.conflicts  # the same resolution, reported each time


def test_the_initial_macrostep_and_the_data_free_memo() -> None:
    tables = Tables(chart_of(CONFLICT))
    initial = abstract_initial_macrostep(tables, {}, _always(True, []))
    assert initial.fired and initial.target.paths == {"p", "p.p1", "q", "q.q1"}
    known = data_free_macrostep(tables, initial.target, "GO")
    assert isinstance(known, StaticMacrostep) and len(known.conflicts) == 1
    final = tables.configuration(frozenset({tables.chart.path_index["p.p2"]}))
    assert isinstance(data_free_macrostep(tables, final, "GO"), NoCandidates)


def test_classify_unselected_agrees_with_step() -> None:
    chart = machine("""
        statechart: c
        events: {GO: {}, STAY: {}, NOPE: {}, ODD: {}}
        initial: a
        states:
          a:
            on: {GO: b}
            already: [STAY]
            reject: {NOPE: NOT_HERE}
          b: {final: true}
        """)
    tables = chart.tables
    state = chart.start()
    config = tables.configuration(state.active_ids)
    for event, expected in [
        ("STAY", (Status.ALREADY_APPLIED, None, "already")),
        ("NOPE", (Status.REJECTED, "NOT_HERE", "reject")),
        ("ODD", (Status.REJECTED, UNDEFINED_TRANSITION, "undefined")),
    ]:
        assert classify_unselected(tables, config, event, None) == expected
        result = chart.send(state, event)
        assert (result.status, result.reason) == expected[:2]

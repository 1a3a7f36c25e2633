"""The engine's hooks for static analysis: abstract macrosteps, conflicts, classification."""

from __future__ import annotations

from chart_helpers import chart_of, machine

from statekit.engine.algorithm import macrostep
from statekit.engine.result import UNDEFINED_TRANSITION, Status
from statekit.engine.step import classify_unselected
from statekit.engine.tables import Tables
from statekit.engine.value_domain import ABSTRACT, AbstractValue

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


def test_an_abstract_macrostep_evaluates_no_effect_but_queues_raised_events() -> None:
    tables = Tables(chart_of(EFFECTS))
    a = tables.configuration(frozenset({tables.chart.path_index["a"]}))
    context = {"n": 1}
    run = macrostep(tables, a, {}, context, ("GO", {"d": 0}), values=ABSTRACT)
    assert run.fired
    assert run.configuration.paths == {"c"}
    assert context == {"n": 1}
    assert isinstance(run.context["n"], AbstractValue)
    assert run.emitted == [] and run.raised == ["PING"]


def test_the_conflict_log_records_resolutions_that_remove_a_transition() -> None:
    tables = Tables(
        chart_of("""
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
        """)
    )
    tables.conflict_log = []
    start = tables.configuration(
        frozenset(tables.chart.path_index[p] for p in ("p", "p.p1", "q", "q.q1"))
    )
    run = macrostep(tables, start, {}, {}, ("GO", {}), values=ABSTRACT)
    ((config, enabled, kept),) = tables.conflict_log
    assert config is start and len(enabled) == 2 and kept == enabled[:1]
    assert run.configuration.paths == {"p", "p.p1", "q", "q.q2"}


def test_classify_agrees_with_step() -> None:
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
    for event, expected in [
        ("STAY", (Status.ALREADY_APPLIED, None, "already")),
        ("NOPE", (Status.REJECTED, "NOT_HERE", "reject")),
        ("ODD", (Status.REJECTED, UNDEFINED_TRANSITION, "undefined")),
    ]:
        assert classify_unselected(tables, state._config, event, None) == expected
        result = chart.send(state, event)
        assert (result.status, result.reason) == expected[:2]

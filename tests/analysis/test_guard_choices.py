"""The scripted guard oracle: data guards answered from a script, known ones exactly."""

from __future__ import annotations

from chart_helpers import chart_of

from statekit.analysis.guard_choices import MAX_CHOICES, ScriptedGuardOracle
from statekit.analysis.guards import ThreeValued
from statekit.compiler.ir import GuardCheck, Transition

CHART = """
    statechart: g
    context:
      n: {type: integer, default: 0}
    events: {GO: {amount: integer}}
    initial: a
    states:
      a:
        on:
          GO:
            - {to: b, if: ctx.n > 1}
            - {to: b, if: event.amount > 1}
            - {to: b, if: "active('a')"}
      b: {}
"""


def _checks() -> list[tuple[Transition, GuardCheck]]:
    chart = chart_of(CHART)
    return [(t, t.guards[0]) for t in chart.transitions if t.guards]


def test_unknown_data_guards_follow_the_script_and_extend_it_with_true() -> None:
    (t_ctx, ctx_guard), (t_event, event_guard), (t_active, active_guard) = _checks()
    chart = chart_of(CHART)
    active = frozenset({0, chart.states[1].id})
    script = [False]
    oracle = ScriptedGuardOracle(script, ThreeValued(), {})
    assert oracle(ctx_guard, t_ctx, {"n": object()}, {}, active) is False  # from the script
    assert oracle(event_guard, t_event, {"n": 0}, {"amount": 1}, active) is True  # extended
    assert script == [False, True]
    assert oracle(active_guard, t_active, {"n": 0}, {}, active) is True  # known: no choice
    assert [a.holds for a in oracle.assumptions] == [False, True]
    assert not oracle.cut


def test_the_same_guard_on_the_same_data_is_one_choice_and_past_the_bound_guards_fail() -> None:
    (t_ctx, ctx_guard), _, _ = _checks()
    value = object()
    oracle = ScriptedGuardOracle([], ThreeValued(), {})
    first = oracle(ctx_guard, t_ctx, {"n": value}, {}, frozenset({0}))
    again = oracle(ctx_guard, t_ctx, {"n": value}, {}, frozenset({0}))
    assert first is again is True and len(oracle.assumptions) == 1
    full = ScriptedGuardOracle([], ThreeValued(), {})
    for _ in range(MAX_CHOICES):  # each new value of ctx.n is a new choice
        assert full(ctx_guard, t_ctx, {"n": object()}, {}, frozenset({0})) is True
    assert full(ctx_guard, t_ctx, {"n": object()}, {}, frozenset({0})) is False
    assert full.cut and len(full.script) == MAX_CHOICES

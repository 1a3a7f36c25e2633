"""unreachable-transition: a transition whose source is reachable but which is never selected.

The source state is reachable, yet in no reachable configuration does the
transition fire: its guards are false whenever its source is active (they
test `active()` states that never coincide with it), an earlier candidate
always wins, or conflict resolution always drops it. Often a leftover, or a
guard that tests the wrong state. A warning: the chart still works.
Alternatives reported by `shadowed-transition`, transitions on final states
(`final-has-transitions`) and transitions of unreachable states are left to
those rules. Nothing is reported when the exploration hit a bound (see
`analysis-limit`).

Failing::

    events: {GO: {}}
    parallel: true
    states:
      a: {initial: a1, states: {a1: {on: {GO: {to: a2, if: "active('b.b2')"}}}, a2: {}}}
      b: {initial: b1, states: {b1: {}, b2: {}}}       # nothing moves b to b2

Passing::

    events: {GO: {}, NEXT: {}}
    parallel: true
    states:
      a: {initial: a1, states: {a1: {on: {GO: {to: a2, if: "active('b.b2')"}}}, a2: {}}}
      b: {initial: b1, states: {b1: {on: {NEXT: b2}}, b2: {}}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.guards import ThreeValued
from statekit.analysis.report import state_name, trigger
from statekit.analysis.static import shadowed_alternatives
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart, StateKind

SLUG = "unreachable-transition"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per never-selected transition of a reachable, non-final state."""
    explored = facts.exploration
    if not explored.complete or not explored.nodes:
        return
    reached = facts.reached_states
    selected = facts.selected_transitions
    shadowed = {s.transition for s in shadowed_alternatives(chart)}
    three = ThreeValued()
    never = [
        t
        for t in chart.transitions
        if t.id not in selected
        and t.id not in shadowed
        and t.source in reached
        and chart.states[t.source].kind is not StateKind.FINAL
    ]
    livelocked = {
        t
        for node in explored.nodes
        for outcome in node.outcomes or ()
        if outcome.basis == "livelock"
        for plan in outcome.steps
        for t in plan.transitions
    }
    sources = {t.source for t in never}
    configs: dict[int, list[frozenset[int]]] = {s: [] for s in sources}
    for config in explored.configurations():
        for s in sources.intersection(config.ids):
            configs[s].append(config.ids)
    for t in never:
        where = state_name(chart, t.source)
        with_source = configs[t.source]
        false_guards = [
            check
            for check in t.guards
            if with_source
            and all(three.truth(check.expression, ids) is False for ids in with_source)
        ]
        if false_guards:
            check = false_guards[0]
            name = f"guard {check.name}" if check.name else "its condition"
            why = (
                f"{name} ({check.expression.source}) is false in every reachable "
                f"configuration with '{where}' active"
            )
        elif t.id in livelocked:
            why = (
                "it fires only in macrosteps that never settle, which the engine rejects "
                "with LIVELOCK (eventless transitions or raised events keep firing)"
            )
        elif not with_source:
            why = f"'{where}' is only active in the middle of macrosteps"
        else:
            why = (
                "in every reachable configuration with it active, an earlier candidate "
                "or a conflicting transition wins"
            )
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"this transition on {trigger(chart, t.id)} from '{where}' is never selected, "
            "though its source is reachable",
            t.span,
            (why, "remove it, or fix the guard or the state it tests"),
        )

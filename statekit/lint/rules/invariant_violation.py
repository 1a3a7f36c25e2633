"""invariant-violation: a reachable configuration breaks a state-form invariant.

State-form invariants (`when` / `require` / `forbid`) depend only on the
configuration, so the explorer checks them in every reachable configuration
(as the chart is written, without the engine's runtime check: at runtime the
step into such a configuration is rejected with INVARIANT_VIOLATION, which
is still a modelling error). The finding shows the shortest event trace from
the initial configuration, each step with a payload checked by replaying the
trace through the engine (or, where none was found, marked as assumed) and the
data-guard outcomes it assumed, and points
at the transition whose step breaks the invariant (a related location: the
transition of the last step that entered a `when` or `forbid` state or left a
`require` state; every transition of that step when none did).
Expression invariants (`assert`) are reported only when they are false
whatever the data (e.g. over `active()` alone); the others are enforced at
runtime (`statekit explain` lists which).

Failing::

    parallel: true
    states:
      lifecycle:
        initial: running
        states:
          running: {on: {FINISH: done}}
          done: {}
      artifact:
        initial: absent
        states: {absent: {on: {UPLOAD: uploaded}}, uploaded: {}}
    invariants:
      done_has_artifact: {when: lifecycle.done, require: artifact.uploaded}

Passing::

    # ... the same chart, but FINISH waits for the upload:
          running: {on: {FINISH: {to: done, if: "active('artifact.uploaded')"}}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.exploration import Exploration
from statekit.analysis.facts import ChartFacts
from statekit.analysis.guards import ThreeValued
from statekit.analysis.report import leaves, transition_label
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity
from statekit.compiler.invariant_ir import ExpressionInvariant, StateInvariant
from statekit.compiler.ir import CompiledChart

SLUG = "invariant-violation"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per invariant that a reachable configuration breaks (the first found)."""
    explored = facts.exploration
    for invariant in chart.invariants:
        found = first_violation(explored, invariant)
        if found is None:
            continue
        node = explored.nodes[found]
        why = _why(chart, invariant, node.config.ids)
        breaking = breaking_transitions(explored, invariant, found)
        related = tuple(
            RelatedLocation(
                chart.transitions[t].span,
                f"this transition breaks invariant '{invariant.name}'",
            )
            for t in breaking
        )
        if breaking:
            culprit = "broken by " + "; ".join(transition_label(chart, t) for t in breaking)
        else:
            culprit = "broken by the initial configuration"
        trace = checked_trace(facts.replays, found)
        notes = (
            *trace_notes(trace),
            why,
            culprit,
            "at runtime the last step of this path is rejected with INVARIANT_VIOLATION",
        )
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"invariant '{invariant.name}' does not hold in the reachable configuration "
            f"{leaves(chart, node.config)}",
            invariant.span,
            notes,
            related,
            trace,
        )


def breaking_transitions(
    explored: Exploration, invariant: StateInvariant | ExpressionInvariant, node_id: int
) -> tuple[int, ...]:
    """The transitions of the step into `node_id` that break `invariant`: those of the
    microsteps that entered a `when` or `forbid` state or exited a `require` state,
    else every transition of the step (none when the initial configuration breaks it)."""
    via = explored.nodes[node_id].via
    fired = via.transitions()
    if isinstance(invariant, StateInvariant):
        entering = frozenset(invariant.when + invariant.forbid)
        leaving = frozenset(invariant.require)
        culprits = tuple(
            t
            for plan in via.steps
            if via.fired
            if entering.intersection(plan.entry_order) or leaving.intersection(plan.exit_order)
            for t in plan.transitions
        )
        if culprits:
            return tuple(dict.fromkeys(culprits))
    return tuple(dict.fromkeys(fired))


def first_violation(
    explored: Exploration, invariant: StateInvariant | ExpressionInvariant
) -> int | None:
    """The first abstract state (breadth-first) that breaks `invariant`, or None."""
    tables = explored.tables
    if isinstance(invariant, StateInvariant):
        for node in explored.nodes:
            if invariant.name in tables.broken_state_invariants(node.config):
                return node.id
        return None
    three = ThreeValued()
    for node in explored.nodes:
        if three.truth(invariant.expression, node.config.ids) is False:
            return node.id
    return None


def _why(
    chart: CompiledChart, invariant: StateInvariant | ExpressionInvariant, active: frozenset[int]
) -> str:
    if isinstance(invariant, ExpressionInvariant):
        return f"`{invariant.expression.source}` is false here whatever the data"
    path = [chart.states[s].path for s in invariant.when]
    missing = [chart.states[s].path for s in invariant.require if s not in active]
    forbidden = [chart.states[s].path for s in invariant.forbid if s in active]
    parts = []
    if missing:
        parts.append("not " + ", ".join(f"'{p}'" for p in missing))
    if forbidden:
        parts.append("also " + ", ".join(f"'{p}'" for p in forbidden) + " (forbidden)")
    return f"{', '.join(repr(p) for p in path)} active, but " + " and ".join(parts)

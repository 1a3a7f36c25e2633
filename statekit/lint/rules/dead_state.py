"""dead-state: a non-final state that, once entered, can never be left.

A reachable atomic state is dead when no macrostep from any reachable
configuration that contains it exits it: no transition on it or its
ancestors (nor one elsewhere whose exit set covers it) can ever fire there,
so the object stays in it forever. Targetless transitions do not leave a
state, so a state with only those is dead too; a self-transition leaves and
re-enters it, so it is not. If that is where its life ends, mark it
`final: true`; otherwise a transition out of it is missing. Nothing is
reported when the exploration hit a bound (see `analysis-limit`).

Failing::

    events: {PAY: {}, REFUND: {}}
    initial: open
    states:
      open: {on: {PAY: paid}}
      paid: {reject: {REFUND: NOT_REFUNDABLE}}    # stuck: nothing leaves it

Passing::

    events: {PAY: {}, REFUND: {}}
    initial: open
    states:
      open: {on: {PAY: paid}}
      paid: {on: {REFUND: refunded}}
      refunded: {final: true}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart, StateKind

SLUG = "dead-state"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per reachable, non-final atomic state that is never exited."""
    explored = facts.exploration
    if not explored.complete:
        return
    left = facts.left_states
    first: dict[int, int] = {}
    for node in explored.nodes:
        for s in node.config.atomic:
            first.setdefault(s, node.id)
    for state_id, node_id in sorted(first.items()):
        state = chart.states[state_id]
        if state.kind is not StateKind.ATOMIC or state_id in left:
            continue
        trace = checked_trace(facts.replays, node_id)
        notes = (
            *trace_notes(trace),
            "no transition on it or its ancestors can fire in any reachable configuration "
            "that contains it",
            "mark it `final: true` if the object's life ends here, or add a transition out",
        )
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"state '{state.path}' can never be left once entered, and it is not final",
            state.span,
            notes,
            trace=trace,
        )

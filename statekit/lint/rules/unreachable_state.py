"""unreachable-state: a state that no configuration reachable from the initial one contains.

The chart is explored from its initial configuration with the engine's own
macrosteps: `active()` guards are decided on each configuration, guards on
data (`ctx.*`, `event.*`) are taken both ways. A state that no macrostep ever
enters (even for a moment, e.g. a final state followed by `done`) is dead
code or a sign of a missing transition. Only the outermost unreachable state
is reported; the states inside it are unreachable too. A chart whose initial
macrostep never settles (eventless transitions or raised events keep firing:
`start()` fails) reaches no state at all: one finding at the chart says so.
Nothing is reported when the exploration hit a bound (see `analysis-limit`).

Failing::

    events: {GO: {}}
    initial: idle
    states:
      idle: {on: {GO: done}}
      archived: {final: true}     # nothing leads here
      done: {final: true}

Passing::

    events: {GO: {}, ARCHIVE: {}}
    initial: idle
    states:
      idle: {on: {GO: done, ARCHIVE: archived}}
      archived: {final: true}
      done: {final: true}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart, StateKind

SLUG = "unreachable-state"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per outermost state that no reachable configuration contains."""
    explored = facts.exploration
    if not explored.complete:
        return
    if not explored.nodes:  # every run of the initial macrostep is a LIVELOCK
        traces = [checked_trace(facts.replays, -1, o) for o in explored.initial]
        runs = tuple(line for trace in traces for line in trace_notes(trace))
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"no state of '{chart.name}' is reachable: the initial macrostep never settles "
            "(eventless transitions or raised events keep firing), so the chart cannot start",
            chart.span,
            (*runs, "give the eventless transitions or raises of the start a guard that fails"),
            trace=traces[0] if traces else (),
        )
        return
    reached = facts.reached_states
    states = chart.states
    for state in states[1:]:
        if state.kind is StateKind.HISTORY or state.id in reached:
            continue
        if state.parent and state.parent not in reached:
            continue  # reported at its outermost unreachable ancestor
        inside = sum(
            1
            for s in states[state.id + 1 : state.last_descendant + 1]
            if s.kind is not StateKind.HISTORY
        )
        notes = [
            f"explored {len(explored.configurations()):,} reachable configuration(s); "
            "guards on ctx and event data were taken both ways"
        ]
        if inside:
            notes.append(f"the {inside} state(s) inside it are unreachable too")
        notes.append("add a transition that leads here, or remove the state")
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"state '{state.path}' is unreachable: no configuration reachable from "
            "the initial one contains it",
            state.span,
            tuple(notes),
        )

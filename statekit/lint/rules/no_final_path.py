"""no-final-path: a reachable configuration from which no final configuration is reachable.

Applies to charts that can end: a final state at the top level (for a
parallel root, a final state in every region). The explorer builds the graph
of reachable configurations (data guards taken both ways, so a path that
needs some data exists); configurations that cannot reach a final
configuration form *traps*. The smallest trap is reported, at a state of its
first configuration, with a shortest path into it (each step with a payload
checked by replay, or marked as assumed) and the data-guard outcomes that path
assumed. Nothing is reported when the exploration hit a bound
(see `analysis-limit`).

Failing::

    events: {GO: {}, RETRY: {}}
    initial: running
    states:
      running: {on: {GO: waiting}}
      waiting: {always: stuck}                   # an eventless step into a loop
      stuck: {on: {RETRY: stuck}}               # nothing ever reaches `done`
      done: {final: true}

Passing::

    events: {GO: {}, RETRY: {}}
    initial: running
    states:
      running: {on: {GO: waiting}}
      waiting: {always: stuck}
      stuck: {on: {RETRY: done}}
      done: {final: true}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts, bottom_components, can_end
from statekit.analysis.report import leaves
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart, StateKind

SLUG = "no-final-path"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"
SHOWN = 5
"""Configurations of the trap listed in the notes."""


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """At most one finding: the smallest trap of the chart, if it has any."""
    if not can_end(chart):
        return
    explored = facts.exploration
    if not explored.complete or not explored.nodes:
        return
    nodes = explored.nodes
    trapped = {n.id for n in nodes} - facts.ending
    if not trapped:
        return
    traps = bottom_components(facts.successors, trapped)
    trap = min(traps, key=lambda c: (len(c), min(nodes[n].depth for n in c), c[0]))
    entry = min(trap, key=lambda n: (nodes[n].depth, n))
    config = nodes[entry].config
    stuck = [s for s in config.atomic if chart.states[s].kind is not StateKind.FINAL]
    span = chart.states[stuck[0]].span if stuck else chart.span
    configurations = list(dict.fromkeys(leaves(chart, nodes[n].config) for n in trap))
    shown = ", ".join(configurations[:SHOWN])
    more = f" and {len(configurations) - SHOWN} more" if len(configurations) > SHOWN else ""
    trace = checked_trace(facts.replays, entry)
    notes = (
        *trace_notes(trace),
        f"the trap: {shown}{more}",
        f"{len(trapped):,} of {len(nodes):,} reachable abstract state(s) cannot end "
        f"({len(traps)} trap(s))",
        "add a transition out of the trap towards a final state",
    )
    yield Diagnostic(
        SLUG,
        DEFAULT_SEVERITY,
        f"no final configuration can be reached from {leaves(chart, config)}",
        span,
        notes,
        trace=trace,
    )

"""conflicting-transitions: orthogonal transitions enabled together that exit a common ancestor.

When the same event enables transitions in two regions of a parallel state
and both exit a common ancestor (at least one leaves the parallel state),
only one can fire: SCXML keeps the one first in document order and drops
the other. That choice by document order is almost always a modelling bug.
Found by the exploration, in reachable configurations and with the
data-guard outcomes the path assumed (each step's payload checked by replay,
or marked as assumed); a descendant beating its ancestor is
the normal priority and is not reported.

Failing::

    parallel: true
    states:
      payment:
        initial: pending
        states:   # both CANCEL transitions exit the root: one is dropped
          pending: {on: {CANCEL: {to: [payment.refunded, shipping.stopped]}}}
          refunded: {}
      shipping:
        initial: packing
        states:
          packing: {on: {CANCEL: {to: [payment.pending, shipping.returned]}}}
          stopped: {}
          returned: {}

Passing::

    parallel: true
    states:
      payment:
        initial: pending
        states:
          pending: {on: {CANCEL: payment.refunded}}    # each region handles its own part
          refunded: {}
      shipping:
        initial: packing
        states:
          packing: {on: {CANCEL: shipping.stopped}}
          stopped: {}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.exploration import SeenConflict
from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import leaves, state_name, transition_label, trigger
from statekit.analysis.witness import Payload, checked_trace, payload_text, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity, TraceStep
from statekit.compiler.ir import CompiledChart

SLUG = "conflicting-transitions"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per pair of orthogonal transitions that conflict somewhere."""
    explored = facts.exploration
    seen: set[tuple[int, int]] = set()
    for found in explored.conflicts:
        conflict = found.conflict
        for loss in conflict.losses:
            kept, lost = loss.kept, loss.dropped
            if (kept, lost) in seen or not loss.by_document_order:
                continue
            seen.add((kept, lost))
            config = leaves(chart, conflict.configuration)
            assuming = tuple(x.describe(chart) for x in found.assumptions)
            trace: tuple[TraceStep, ...] = ()
            if found.node < 0:
                step = [f"in the initial macrostep, with both enabled in {config}"]
            else:
                payload = _payload(facts, found)
                fields = None if payload is None else tuple(payload.items())
                then = TraceStep(found.event, f"with both enabled in {config}", fields, assuming)
                trace = (*checked_trace(facts.replays, found.node), then)
                step = [*trace_notes(trace[:-1])]
                step.append(f"  then {found.event}, with both enabled in {config}")
                if payload is None or payload:  # an event without fields: nothing to show
                    step.append("     " + payload_text(payload))
            step.extend(f"     assuming {a}" for a in assuming)
            notes = (
                f"kept: {transition_label(chart, kept)}",
                f"dropped: {transition_label(chart, lost)}",
                *step,
                "give one of them a guard on active(...), target only its own region, "
                "or handle the event once on the common ancestor",
            )
            yield Diagnostic(
                SLUG,
                DEFAULT_SEVERITY,
                f"{trigger(chart, lost)} enables transitions in orthogonal regions that both "
                f"exit '{state_name(chart, min(loss.common_exits))}': only document order "
                "decides, and this one never fires there",
                chart.transitions[lost].span,
                notes,
                trace=trace,
            )


def _payload(facts: ChartFacts, found: SeenConflict) -> Payload | None:
    """A checked payload of the event that meets the conflict, after the path's replay."""
    for outcome in facts.exploration.outcomes_of(found.node) or ():
        if outcome.event == found.event and outcome.assumptions == found.assumptions:
            return facts.replays.answer(found.node, outcome)
    return None

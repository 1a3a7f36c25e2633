"""region-reset: a transition that re-enters a parallel state restarts the regions it does not name.

A transition from inside a parallel state (or from the parallel state itself)
whose targets lie in some of its regions leaves the parallel state and enters
it again (its domain is above it; for a parallel root, the root counts as
re-entered): every region that holds no target restarts at its initial
state, losing where it was. This is SCXML, but rarely what the author of a
cross-region transition meant. The finding names the regions that restart.

To keep the restart and silence the finding, name them: list the initial
state of each such region (or the region itself) among the targets, as a
multi-target `to: [...]`. To keep the regions where they are instead, move
the transition into the region it changes (its source and targets in the same
region), or let another region react to an event of its own.

Failing::

    parallel: true
    states:
      payment:
        initial: unpaid
        states:
          unpaid: {on: {PAY: paid}}
          paid: {on: {RETRY_SHIPPING: shipping.waiting}}   # restarts payment too
      shipping:
        initial: waiting
        states: {waiting: {on: {SHIP: sent}}, sent: {}}

Passing::

    # ... the same restart, said explicitly:
          paid: {on: {RETRY_SHIPPING: {to: [payment.unpaid, shipping.waiting]}}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import state_name, transition_label
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart, StateKind, Transition

SLUG = "region-reset"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per transition that restarts regions it does not name."""
    for transition in chart.transitions:
        restarted = restarted_regions(chart, transition)
        if not restarted:
            continue
        names = ", ".join(f"'{state_name(chart, r)}'" for r in restarted)
        parallels = sorted({chart.states[r].parent or 0 for r in restarted})
        where = ", ".join(f"'{state_name(chart, p)}'" for p in parallels)
        targets = [state_name(chart, t) for t in transition.targets]
        initials = [
            state_name(chart, chart.states[r].initial[0])
            if chart.states[r].initial
            else state_name(chart, r)
            for r in restarted
        ]
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"transition {transition_label(chart, transition.id, line=False)} restarts "
            f"{'region' if len(restarted) == 1 else 'regions'} {names} at "
            f"{'its initial state' if len(restarted) == 1 else 'their initial states'}: "
            f"it leaves and re-enters the parallel state {where} without a target in "
            f"{'it' if len(restarted) == 1 else 'them'}",
            transition.span,
            (
                f"if the restart is meant, name it: `to: [{', '.join(targets + initials)}]`",
                "to keep those regions where they are, move the transition into the region "
                "it changes (source and targets in one region)",
            ),
        )


def restarted_regions(chart: CompiledChart, transition: Transition) -> tuple[int, ...]:
    """The regions that `transition` exits and enters by default: regions, with no target
    at or below them, of the parallel states that are active when it fires (its source
    is in them) and that it leaves and re-enters (its domain is above them, or is a
    parallel root) to reach a target inside them. A target that is a history state of
    the parallel state itself restores every region, so nothing restarts there."""
    if not transition.targets or transition.domain is None:
        return ()
    states = chart.states
    domain = transition.domain
    source = states[transition.source]
    found: list[int] = []
    for p in (transition.source, *source.ancestors):
        node = states[p]
        if node.kind is not StateKind.PARALLEL:
            continue
        re_entered = states[domain].contains(p) or (p == domain == 0)
        if not re_entered:
            continue
        if not any(node.contains(t) for t in transition.targets):
            continue  # the transition leaves it for good
        if any(t in node.history_children for t in transition.targets):
            continue
        for region in node.children:
            named = any(t == region or states[region].contains(t) for t in transition.targets)
            if not named:
                found.append(region)
    return tuple(sorted(found))

"""invoke-cycle: charts whose start invokes, through initial states, a chain back to itself.

An invocation starts when its state is entered. When a chart's initial
states invoke a child, the child's initial states invoke another, and the
chain comes back to a chart already in it, every start of the chart starts
one more member, without end: the family step stops at its delivery bound
(`REJECTED FAMILY_BOUND`, `FamilySimulator` a `StartError`) and the chart
can never be started. A cycle through a state entered later (one the chart
can also leave or never reach) is finite and not reported; nor is a chart
whose initial configuration may be left at once (an `always` or `done`
transition of an initial state), since the invocation may then not start.

The finding sits on the chart's invoke that begins the chain, and lists the
chain with each invoke's position.

Failing::

    statechart: node
    initial: running
    states:
      running:
        invoke: {id: kid, chart: node}     # starts a node, whose start starts a node...

Passing::

    statechart: node
    initial: idle
    states:
      idle: {on: {GROW: running}}          # a node starts one only when told to
      running:
        invoke: {id: kid, chart: node}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.chart_set import ChartSet, InvokedChart
from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity
from statekit.compiler.ir import CompiledChart, TransitionKind
from statekit.lint.family_checks import FamilyView

SLUG = "invoke-cycle"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per invocation at the start of `chart` that leads back to it."""
    for first in initial_invocations(chart, family.chart_set):
        chain = _chain_back(chart, first, family.chart_set)
        if chain is None:
            continue
        steps = " → ".join(
            [chart.name, *(f"{step.invocation.id} ({step.chart_name})" for step in chain)]
        )
        related = tuple(
            RelatedLocation(
                step.invocation.span,
                f"invoke '{step.invocation.id}' of '{step.parent.name}', started at its start",
            )
            for step in chain
        )
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"invoke '{first.invocation.id}' starts a chain of charts that comes back to chart "
            f"'{chart.name}' at each start: {steps}; starting '{chart.name}' never ends",
            family.key_span(first.invocation.span, "chart"),
            (
                *(
                    f"'{step.parent.name}' invokes '{step.invocation.id}' at "
                    f"{step.invocation.span} in its initial state "
                    f"'{step.parent.states[step.invocation.state].path}'"
                    for step in chain
                ),
                "the family step stops at its delivery bound (REJECTED FAMILY_BOUND): "
                "invoke from a state entered later, on an event, to end the chain",
            ),
            related,
        )


def initial_invocations(chart: CompiledChart, chart_set: ChartSet) -> tuple[InvokedChart, ...]:
    """The invocations the chart surely starts when it starts: those of its initially
    entered states, unless an `always` or `done` transition may leave them at once."""
    entered = set(chart.states[0].default_entry) | {0}
    leaves_at_once = any(
        t.kind in (TransitionKind.ALWAYS, TransitionKind.DONE) and t.source in entered
        for t in chart.transitions
    )
    if leaves_at_once:
        return ()
    return tuple(found for found in chart_set.invoked(chart) if found.invocation.state in entered)


def _chain_back(
    chart: CompiledChart, first: InvokedChart, chart_set: ChartSet
) -> tuple[InvokedChart, ...] | None:
    """The shortest chain of initial invocations from `first` back to `chart`, or None
    (a breadth-first walk over charts, each visited once)."""
    frontier: list[tuple[InvokedChart, ...]] = [(first,)]
    seen: set[int] = set()
    while frontier:
        later: list[tuple[InvokedChart, ...]] = []
        for chain in frontier:
            child = chain[-1].child
            if child is None or id(child) in seen:
                continue
            if child is chart:
                return chain
            seen.add(id(child))
            later.extend((*chain, step) for step in initial_invocations(child, chart_set))
        frontier = later
    return None

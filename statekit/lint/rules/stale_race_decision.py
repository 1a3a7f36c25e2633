"""stale-race-decision: a `races:` entry that decides no race.

An entry under `races:` records who wins when two events arrive in either
order. It is stale when the pair is not order-sensitive in any reachable
configuration it covers (the chart changed and the events now commute, or
`in:` names a state where they never race), when both events come from one
producer (they arrive in its order, so they never race), or when it names an
event or state the chart does not declare. A stale decision misleads the
reader: remove it, or fix what it names. The claim "not order-sensitive
anywhere" is made only when the exploration was complete.

Failing::

    events: {A: {}, B: {}}
    parallel: true
    states:
      left: {initial: a0, states: {a0: {on: {A: a1}}, a1: {}}}
      right: {initial: b0, states: {b0: {on: {B: b1}}, b1: {}}}
    races:
      a_vs_b: {events: [A, B], decision: A wins.}   # A and B commute

Passing::

    # ... the same chart without the entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.races import producer_of, races_in
from statekit.analysis.report import state_name
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import CompiledChart, RaceDecision

SLUG = "stale-race-decision"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per stale entry (see the module docstring)."""
    if not chart.races:
        return
    producers = producer_of(chart)
    unmatched: tuple[RaceDecision, ...] | None = None
    for decision in chart.races:
        a, b = decision.events
        named = False
        for event, span in zip(decision.events, decision.event_spans, strict=True):
            if event not in chart.events and chart.timer(event) is None:
                named = True
                declared = ", ".join(chart.events) or "none"
                yield _finding(
                    f"race '{decision.name}' names the undeclared event '{event}'",
                    span,
                    f"declared events: {declared}",
                )
        if decision.state_ref is not None and decision.state is None:
            named = True
            yield _finding(
                f"race '{decision.name}': `in: {decision.state_ref}` names no state of the "
                "chart that can be active",
                decision.state_span or decision.span,
                "write a state's name or a unique dotted suffix of its path",
            )
        if named:
            continue
        producer = producers.get(a)
        if producer is not None and producer == producers.get(b):
            yield _finding(
                f"race '{decision.name}': '{a}' and '{b}' are both sent by producer "
                f"'{producer}', which sends them in order, so they never race",
                decision.span,
                "remove the entry, or list one of the events under another producer",
            )
            continue
        if not facts.exploration.complete:
            continue  # a race past the bound may exist
        if unmatched is None:
            unmatched = races_in(facts.exploration).unmatched
        if decision in unmatched:
            where = (
                f" where '{state_name(chart, decision.state)}' is active"
                if decision.state is not None
                else ""
            )
            yield _finding(
                f"race '{decision.name}': '{a}' and '{b}' are not order-sensitive in any "
                f"reachable configuration{where}: both orders give the same answers",
                decision.span,
                "remove the entry (the events commute), or check `in:`",
            )


def _finding(message: str, span: SourceSpan, note: str) -> Diagnostic:
    return Diagnostic(SLUG, DEFAULT_SEVERITY, message, span, (note,))

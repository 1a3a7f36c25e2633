"""stale-race-decision: a `races:` entry that decides no race, or orders no pair.

An entry under `races:` records who wins when events arrive in either order
(each side an event, a list of events or `"*"`). It is stale when no race it
covers is order-sensitive in any reachable configuration (the chart changed
and the events now commute, or `in:` names a state where they never race),
when every pair it covers is sent in order by one producer or ordered by an
ordering fact (so they never race), or when it names an event or state the
chart does not declare. An ordering fact (`precedes: [A, B]`) is stale only
when it orders no pair the analysis would examine (every pair it orders is
sent in order by one producer, or is two timers). A stale entry misleads the
reader: remove it, or fix what it names. The claim "not order-sensitive
anywhere" is made only when the exploration was complete. An unordered
producer's `decision:` is never stale: it states how the producer sends.

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
from statekit.analysis.race_decisions import RaceDecisions
from statekit.analysis.races import races_in
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
    rules = RaceDecisions(chart)
    events, timers = facts.exploration.events, facts.exploration.timer_events
    examined = rules.pairs(events, timers)
    unmatched: tuple[RaceDecision, ...] | None = None
    for decision in chart.races:
        if _names_unknown(chart, decision):
            yield from _unknown_names(chart, decision)
            continue
        a, b = decision.events
        if decision.precedes:
            if rules.orders_nothing(decision, events, timers):
                yield _finding(
                    f"ordering fact '{decision.name}' orders no pair of events that could "
                    f"race: every pair of {a} before {b} is sent in order by one producer "
                    "(or is two timers)",
                    decision.span,
                    "remove the entry",
                )
            continue
        if not any(decision.covers(x, y) for x, y in examined):
            yield _never_race(rules, decision)
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


def _names_unknown(chart: CompiledChart, decision: RaceDecision) -> bool:
    unknown = any(
        event not in chart.events and chart.timer(event) is None
        for side in decision.sides
        for event in side.events
    )
    return unknown or (decision.state_ref is not None and decision.state is None)


def _unknown_names(chart: CompiledChart, decision: RaceDecision) -> Iterator[Diagnostic]:
    for side in decision.sides:
        for event, span in zip(side.events, side.spans, strict=True):
            if event not in chart.events and chart.timer(event) is None:
                declared = ", ".join(chart.events) or "none"
                yield _finding(
                    f"race '{decision.name}' names the undeclared event '{event}'",
                    span,
                    f"declared events: {declared}",
                )
    if decision.state_ref is not None and decision.state is None:
        yield _finding(
            f"race '{decision.name}': `in: {decision.state_ref}` names no state of the "
            "chart that can be active",
            decision.state_span or decision.span,
            "write a state's name or a unique dotted suffix of its path",
        )


def _never_race(rules: RaceDecisions, decision: RaceDecision) -> Diagnostic:
    """The finding for a decision every pair of which producers or facts order."""
    a, b = decision.events
    first, second = decision.sides
    if not first.listed and not second.listed and first.events and second.events:
        producer = rules.producers.get(a)
        if producer is not None and producer == rules.producers.get(b):
            return _finding(
                f"race '{decision.name}': '{a}' and '{b}' are both sent by producer "
                f"'{producer}', which sends them in order, so they never race",
                decision.span,
                "remove the entry, or list one of the events under another producer",
            )
        fact = rules.ordering(a, b)
        if fact is not None:
            return _finding(
                f"race '{decision.name}': '{a}' and '{b}' never race: ordering fact "
                f"'{fact.name}' says which arrives first",
                decision.span,
                "remove the entry, or the ordering fact if it does not hold",
            )
    return _finding(
        f"race '{decision.name}': no pair of {a} and {b} can race: each is sent in order "
        "by one producer or ordered by an ordering fact",
        decision.span,
        "remove the entry",
    )


def _finding(message: str, span: SourceSpan, note: str) -> Diagnostic:
    return Diagnostic(SLUG, DEFAULT_SEVERITY, message, span, (note,))

"""undecided-race: two events of different producers whose order changes the answer, undecided.

When two events can arrive in either order (they come from different
producers, or from no declared one) and, from some reachable configuration,
"A then B" and "B then A" end in different states (another configuration,
history, context, armed timers or emitted messages), which one commits first
decides the outcome. A pair whose orders end alike but answer an event
differently is `order-dependent-answer`'s; one whose orders end alike with
the same answers is convergent and needs no decision (`statekit races --all`
lists it). The chart should
say which outcome is meant: an entry under `races:` names the pair (and,
with `in:`, where), and states who wins and why. The analysis decides
nothing itself; it only asks for the decision to be written down.

There is one finding per pair of events, on the transition that the first
order fires; it is shown at the undecided configuration where the orders
differ most (another end configuration before another context, timers or
messages; ties: the shortest path), with both orders' outcomes side by side,
the data-guard outcomes they assumed, the path there, and how many other
configurations the pair is order-sensitive in. The rule checks
charts that declare `producers:` or `races:` (a chart that declares neither
has not said which events come from independent senders; `statekit races`
lists its races all the same).

Failing::

    producers: {worker: [TaskCompleted], user: [TaskCancelled]}
    initial: running
    states:
      running: {on: {TaskCompleted: completed, TaskCancelled: cancelled}}
      completed: {final: true}
      cancelled: {final: true}

Passing::

    # ... the same chart, with the race decided:
    races:
      complete_vs_cancel:
        events: [TaskCompleted, TaskCancelled]
        decision: Whichever commits first wins; the other is rejected as TERMINAL_STATE.
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.race_entry import race_entry, race_fixes
from statekit.analysis.race_witness import race_replays
from statekit.analysis.races import Race, races_in
from statekit.analysis.timers import event_span
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import CompiledChart

SLUG = "undecided-race"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per undecided pair of class `race` (see the module docstring)."""
    if not chart.producers and not chart.races:
        return
    for race in races_in(facts.exploration).divergent:
        if not race.decided:
            yield finding(chart, facts, race, SLUG, DEFAULT_SEVERITY, "changes the outcome")


def finding(
    chart: CompiledChart,
    facts: ChartFacts,
    race: Race,
    slug: str,
    severity: Severity,
    what: str,
) -> Diagnostic:
    """The finding of an undecided race (shared with `order-dependent-answer`)."""
    a, b = race.events
    timers = frozenset(t.name for t in chart.timers)
    pa, pb = (
        p or ("the clock" if event in timers else "no declared producer")
        for event, p in zip(race.events, race.producers, strict=True)
    )
    config = "{" + ", ".join(race.configuration) + "}"
    first, second = race_replays(facts.exploration, race, facts.replays, thorough=False)
    notes = [
        f"{a} then {b}: {race.orders[0].text()}",
        f"  replay: {first.text()}",
        f"{b} then {a}: {race.orders[1].text()}",
        f"  replay: {second.text()}",
    ]
    if race.difference is not None:
        notes.append(f"the orders differ in {race.difference}")
    notes.extend(f"  assuming {x.describe(chart)}" for x in race.assumptions)
    trace = checked_trace(facts.replays, race.node)
    notes.extend(trace_notes(trace))
    if race.elsewhere:
        notes.append(f"they also race in {len(race.elsewhere)} other configuration(s)")
    notes.append(
        f"decide it: races: {race_entry(chart, a, b, 'who wins and why')}"
        " (add `in: STATE` to decide it only there)"
    )
    notes.extend(race_fixes(chart, a, b, "who wins and why"))
    return Diagnostic(
        slug,
        severity,
        f"events '{a}' ({pa}) and '{b}' ({pb}) race in {config}: the order they "
        f"arrive in {what}, and no `races:` entry decides it",
        _place(chart, race),
        tuple(notes),
        trace=trace,
    )


def _place(chart: CompiledChart, race: Race) -> SourceSpan:
    """The first transition the first order fires, else the first event's declaration."""
    for fired in race.orders[0].transitions + race.orders[1].transitions:
        if fired:
            return chart.transitions[fired[0]].span
    return event_span(chart, race.events[0])

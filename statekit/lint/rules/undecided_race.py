"""undecided-race: two events of different producers whose order changes the answer, undecided.

When two events can arrive in either order (they come from different
producers, or from no declared one) and, from some reachable configuration,
"A then B" and "B then A" end in different configurations or answer an event
differently, which one commits first decides the outcome. The chart should
say which outcome is meant: an entry under `races:` names the pair (and,
with `in:`, where), and states who wins and why. The analysis decides
nothing itself; it only asks for the decision to be written down.

There is one finding per pair of events, on the transition that the first
order fires; it shows both orders' outcomes side by side, the data-guard
outcomes they assumed, the shortest path to the first configuration where
they race, and how many other configurations they race in. The rule checks
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
from statekit.analysis.races import Race, races_in
from statekit.analysis.report import path_notes
from statekit.analysis.timers import event_span
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import CompiledChart

SLUG = "undecided-race"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per undecided pair (see the module docstring)."""
    if not chart.producers and not chart.races:
        return
    report = races_in(facts.exploration)
    by_pair: dict[tuple[str, str], list[Race]] = {}
    for race in report.undecided:
        by_pair.setdefault(race.events, []).append(race)
    for (a, b), races in by_pair.items():
        first = races[0]
        pa, pb = (p or "no declared producer" for p in first.producers)
        config = "{" + ", ".join(first.configuration) + "}"
        notes = [
            f"{a} then {b}: {first.orders[0].text()}",
            f"{b} then {a}: {first.orders[1].text()}",
        ]
        notes.extend(f"  assuming {x.describe(chart)}" for x in first.assumptions)
        notes.extend(path_notes(facts.exploration, first.node))
        if len(races) > 1:
            notes.append(f"they also race in {len(races) - 1} other configuration(s)")
        notes.append(
            f"decide it: races: {race_entry(chart, a, b, 'who wins and why')}"
            " (add `in: STATE` to decide it only there)"
        )
        notes.extend(race_fixes(chart, a, b, "who wins and why"))
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"events '{a}' ({pa}) and '{b}' ({pb}) race in {config}: the order they "
            "arrive in changes the answer, and no `races:` entry decides it",
            _place(chart, first),
            tuple(notes),
        )


def _place(chart: CompiledChart, race: Race) -> SourceSpan:
    """The first transition the first order fires, else the first event's declaration."""
    for fired in race.orders[0].transitions + race.orders[1].transitions:
        if fired:
            return chart.transitions[fired[0]].span
    return event_span(chart, race.events[0])

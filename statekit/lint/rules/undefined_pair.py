"""undefined-pair: a declared event that nothing classifies in some reachable configurations.

In every reachable configuration each event the chart uses should have a
deliberate outcome: a transition, an `already` entry (ALREADY_APPLIED) or a
`reject` entry (REJECTED with a reason). Where none applies the engine
answers UNDEFINED_TRANSITION, which tells the caller nothing. Events nothing
mentions are `unused-event`'s business, unless a `reject "*"` somewhere shows
that the chart classifies every event. Guards and `reject "*"` count as
classifying; a final chart answers TERMINAL_STATE, which is a classification
too.

Timer events are asked about only where they can occur: an `after` timer's
event only in configurations where its state is active (it is armed exactly
then; see `statekit.analysis.timers`), never elsewhere. Where it is armed its
own transitions answer it (a failing guard by its reason, `else:` included), so
it is classified unless the chart is already final. An event that a `send`
delivers (delayed or not) is a declared event like any other and counts as
mentioned: it must be classified wherever it can arrive, which is every
reachable configuration (an external sender may send it too).

There is one finding per event and group of configurations, not one per
configuration or active state: the configurations are grouped by the region
that owns the event (the region of a parallel state whose transitions are on
it; the root when it lies in no region), and the finding sits on the smallest
state active in all of them, where one `reject` entry would classify the whole
group. It gives the count, a few example configurations, the shortest path to
the first, and the owning region. In a parallel chart the usual fix is a
region-level `reject:` map on each region listing the events it owns: a state
of the region still answers first with a transition, `already` or its own
`reject`.

Failing::

    events: {PAY: {}, SHIP: {}, CANCEL: {}}
    initial: open
    states:
      open: {on: {PAY: paid, CANCEL: cancelled}, reject: {SHIP: NOT_PAID}}
      paid: {on: {SHIP: shipped}, already: [PAY]}      # CANCEL after PAY: undefined
      shipped: {final: true, reject: {"*": SHIPPED}}
      cancelled: {final: true, reject: {"*": CANCELLED}}

Passing::

    # ... the same chart, with CANCEL classified once paid:
      paid: {on: {SHIP: shipped}, already: [PAY], reject: {CANCEL: ALREADY_PAID}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import leaves, state_name
from statekit.analysis.static import event_owners, mentioned_events
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import Configuration

SLUG = "undefined-pair"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"

EXAMPLES = 3
"""How many example configurations a finding lists."""


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per event and owning region (see the module docstring)."""
    explored = facts.exploration
    wildcard = any(c.event == "*" for s in chart.states for c in s.reject + s.already)
    timer_events = frozenset(explored.timer_events)
    used = (frozenset(chart.events) | timer_events) if wildcard else mentioned_events(chart)
    used -= {e for i in chart.invocations for e in (i.done_event, i.error_event)}
    undefined: dict[str, dict[Configuration, int]] = {}
    for node in explored.nodes:
        for outcome in node.outcomes or ():
            if outcome.basis == "undefined" and outcome.event in used:
                assert outcome.event is not None
                undefined.setdefault(outcome.event, {}).setdefault(node.config, node.id)
    configurations = explored.configurations()
    findings: list[tuple[int, int, Diagnostic]] = []
    order = explored.event_order()
    for event, where in undefined.items():
        owners = event_owners(chart, event)
        groups: dict[int, list[Configuration]] = {}
        for config in where:
            # the first owning region active here; the root owns what no active region does
            region = next((r for r, _ in owners if r != 0 and r in config.ids), 0)
            groups.setdefault(region, []).append(config)
        for region, members in groups.items():
            place = _smallest_place(chart, region, members)
            total = sum(1 for c in configurations if place == 0 or place in c.ids)
            diagnostic = _finding(chart, facts, event, owners, region, place, members, where, total)
            findings.append((place, order[event], diagnostic))
    for _place, _event, diagnostic in sorted(findings, key=lambda f: (f[0], f[1])):
        yield diagnostic


def _smallest_place(chart: CompiledChart, region: int, members: list[Configuration]) -> int:
    """The deepest state at or below `region` that is active in every configuration of
    `members`, descending while exactly one child of the current state is (at a parallel
    state with several regions always active it stops)."""
    common = frozenset.intersection(*(c.ids for c in members))
    place = region
    while True:
        below = [c for c in chart.states[place].children if c in common]
        if len(below) != 1:
            return place
        place = below[0]


def _finding(
    chart: CompiledChart,
    facts: ChartFacts,
    event: str,
    owners: tuple[tuple[int, tuple[int, ...]], ...],
    region: int,
    place: int,
    members: list[Configuration],
    where: dict[Configuration, int],
    total: int,
) -> Diagnostic:
    name = state_name(chart, place)
    among = "" if place == 0 else f" with '{name}' active"
    timer = chart.timer(event)
    if timer is not None:
        fix = (
            f"the timer of '{state_name(chart, timer.state)}' answers it where armed: give its "
            "`after` entry an unguarded alternative or an `else:` reason"
        )
    else:
        fix = (
            f"classify it at '{name}': `reject: {{{event}: REASON}}` there answers in all of "
            f"these configurations whenever no transition or `already` does; or a transition "
            f"on {event}, or `already: [{event}]` if its goal is already reached"
        )
    examples = [f"  {leaves(chart, c)}" for c in members[:EXAMPLES]]
    if len(members) > EXAMPLES:
        examples.append(f"  ... and {len(members) - EXAMPLES} more")
    # The count changes as the chart grows, so it stays out of the message (which the
    # SARIF fingerprint hashes) and comes first among the notes.
    trace = checked_trace(facts.replays, where[members[0]])
    # explored apart (statekit.analysis.compositional), the other regions are counted in
    # their initial states only: their states do not change the answer
    apart = " (the regions that share nothing with it counted in their initial states)"
    counted = apart if facts.exploration.components is not None else ""
    notes = (
        f"UNDEFINED_TRANSITION in {len(members)} of the {total} reachable configurations{among}"
        f"{counted}, for example in:",
        *examples,
        *trace_notes(trace),
        _owner_note(chart, event, owners, region),
        fix,
    )
    message = (
        f"event {event} is not classified under '{name}': no transition, `already` or "
        f"`reject` answers it there (UNDEFINED_TRANSITION)"
    )
    span = chart.states[place].span
    return Diagnostic(SLUG, DEFAULT_SEVERITY, message, span, notes, trace=trace)


def _owner_note(
    chart: CompiledChart,
    event: str,
    owners: tuple[tuple[int, tuple[int, ...]], ...],
    region: int,
) -> str:
    mentions = dict(owners)
    if region not in mentions:
        if not owners:
            return f"no transition, `already` or `reject` names {event}"
        regions = ", ".join(f"'{state_name(chart, r)}'" for r in mentions)
        return f"{event} belongs to {regions}, not active here"
    sources = ", ".join(f"'{state_name(chart, s)}'" for s in mentions[region][:EXAMPLES])
    if len(mentions[region]) > EXAMPLES:
        sources += ", ..."
    kind = "region" if region != 0 else "chart"
    return f"{event} belongs to the {kind} '{state_name(chart, region)}' (mentioned in {sources})"

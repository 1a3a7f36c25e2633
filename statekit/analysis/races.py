"""Races: pairs of events whose order of arrival changes the outcome, by class.

From a reachable configuration, two events A and B of different producers (of
an unordered one, or of no declared producer) can arrive in either order. Both
orders are run with the explorer's own macrosteps
(`statekit.analysis.race_search`) and compared branch by branch: their end
states (configuration and history by the node they end at; context, armed
timers and emitted messages decided conservatively from the effects each ran,
`statekit.analysis.race_effects`) and the answers to the two events. Each
configuration where at least one of the two fires is an *occurrence* of the
pair, of one class (`statekit.analysis.race_records`): `race` when some branch
ends in another state, `info` when the end states agree but an event is
answered differently (applied in one order and rejected in the other, or
rejected for another reason), `convergent` when neither differs. Where neither
event fires the pair commutes trivially and is not examined. Two timer events
are not paired: their order is the clock's (their due times), not a sender's.
An invocation's `done.invoke.<id>` and `error.invoke.<id>`, and the events its
child sends the parent, are paired only in configurations where its state is
active (its child runs only then: `statekit.compiler.chart_set.arrival_states`).

A pair is one `Race`, shown at the configuration where its orders differ most
(another end configuration before another context, timers or messages before
other answers; ties: the shortest path), with the others in `Race.elsewhere`.
A `races:` entry decides the occurrences it covers: it has one of the two
events on each side and, if it has `in:`, that state is active there; when
several entries cover one, the most specific decides it, and none of them is
stale. A convergent occurrence needs no decision. The race a pair is reported
as is about its undecided occurrences: shown at the most different of them, of
their class, and decided only when none is left.

`find_races(chart, options)` explores the chart and returns a `RaceReport`;
`races_of(exploration)` does the same for an exploration at hand (the lint
rules reuse the one in `ChartFacts`). Which pairs are examined (producers,
ordering facts) and which entry decides an occurrence are
`statekit.analysis.race_decisions`'s to say.
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.analysis.compositional import explore_composed
from statekit.analysis.exploration import Exploration
from statekit.analysis.options import ExplorationOptions
from statekit.analysis.race_decisions import RaceDecisions, producer_of
from statekit.analysis.race_records import (
    APPLIED,
    CONFIGURATION,
    CONVERGENT,
    INFO,
    RACE,
    RANKS,
    Classification,
    OrderOutcome,
    Race,
    RaceOccurrence,
    class_of,
)
from statekit.analysis.race_report import RaceReport
from statekit.analysis.race_search import RaceSearch
from statekit.compiler.chart_set import ChartSet, arrival_states
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import Configuration

__all__ = [
    "APPLIED",
    "CONVERGENT",
    "INFO",
    "RACE",
    "Classification",
    "OrderOutcome",
    "Race",
    "RaceOccurrence",
    "RaceReport",
    "find_races",
    "producer_of",
    "races_in",
    "races_of",
]


def find_races(
    chart: CompiledChart,
    options: ExplorationOptions | None = None,
    chart_set: ChartSet | None = None,
) -> RaceReport:
    """Explore `chart` (under `options`) and find its races (see the module docstring);
    `chart_set` holds the charts it invokes (their sends to it are their producers')."""
    return races_of(explore_composed(chart, options or ExplorationOptions()), chart_set)


_last: list[RaceReport] = []
"""The report `races_in` made last (lint's race rules read the same exploration)."""


def races_in(exploration: Exploration) -> RaceReport:
    """`races_of(exploration)`, made once for the exploration asked about last."""
    if _last and _last[0].exploration is exploration:
        return _last[0]
    report = races_of(exploration)
    _last[:] = [report]
    return report


def races_of(exploration: Exploration, chart_set: ChartSet | None = None) -> RaceReport:
    """The races of an explored chart (see the module docstring); an invocation's events
    are its own producer's, with its child's sends when `chart_set` holds the child."""
    chart = exploration.chart
    decisions = RaceDecisions(chart, chart_set)
    producers = decisions.producers
    pairs = decisions.pairs(exploration.events, exploration.timer_events)
    search = RaceSearch(exploration)
    found: dict[tuple[str, str], dict[Configuration, RaceOccurrence]] = {}
    arriving = arrival_states(chart, chart_set)
    for node in exploration.nodes:
        fired = search.fired(node)
        if not fired:
            continue  # neither order of any pair changes anything here
        active = node.config.ids
        for a, b in pairs:
            if a not in fired and b not in fired:
                continue
            if any(e in arriving and not arriving[e] & active for e in (a, b)):
                continue  # an invocation's events arrive only while it is active
            known = found.setdefault((a, b), {})
            before = known.get(node.config)
            if before is not None and before.difference == CONFIGURATION:
                continue  # it cannot differ more in this configuration
            compared = search.compare(node, a, b)
            if compared is None:
                continue
            difference = compared[0]
            if before is not None and _rank(before.difference) >= _rank(difference):
                continue
            known[node.config] = RaceOccurrence(
                configuration=search.configuration(node.config),
                active=active,
                node=node.id,
                path=search.path(node.id),
                race_class=class_of(difference),
                difference=difference,
                decision=None if difference is None else decisions.decide((a, b), active),
            )
    order = {pair: i for i, pair in enumerate(pairs)}
    grouped = [
        _race(search, pair, list(known.values()), producers)
        for pair, known in found.items()
        if known
    ]
    grouped.sort(key=lambda race: (race.node, order[race.events]))
    unmatched = decisions.unmatched()
    return RaceReport(
        chart=chart,
        races=tuple(r for r in grouped if r.race_class != CONVERGENT),
        exploration=exploration,
        unmatched=unmatched,
        convergent=tuple(r for r in grouped if r.race_class == CONVERGENT),
    )


def _rank(difference: str | None) -> int:
    return 0 if difference is None else RANKS[difference]


def _race(
    search: RaceSearch,
    pair: tuple[str, str],
    occurrences: list[RaceOccurrence],
    producers: Mapping[str, str],
) -> Race:
    """A pair's race, shown where it matters most (see the module docstring)."""
    sensitive = [o for o in occurrences if o.difference is not None]
    if sensitive:
        undecided = [o for o in sensitive if o.decision is None]
        pool = undecided or sensitive
        shown = min(pool, key=lambda o: (-_rank(o.difference), len(o.path), o.node))
        elsewhere = tuple(o for o in sensitive if o is not shown)
        decision = None if undecided else shown.decision
    else:
        shown, elsewhere, decision = occurrences[0], tuple(occurrences[1:]), None
    node = search.exploration.nodes[shown.node]
    compared = search.compare(node, *pair)
    assert compared is not None  # it was compared before: both orders have branches
    difference, ab, ba, (i, j) = compared
    orders_ab, orders_ba = search.orders(pair, ab, ba)
    return Race(
        events=pair,
        configuration=shown.configuration,
        active=shown.active,
        node=shown.node,
        path=shown.path,
        orders=(orders_ab[i], orders_ba[j]),
        alternatives=(orders_ab, orders_ba),
        producers=(producers.get(pair[0]), producers.get(pair[1])),
        decision=decision,
        race_class=shown.race_class,
        difference=difference,
        elsewhere=elsewhere,
    )

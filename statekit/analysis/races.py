"""Races: pairs of events whose order of arrival changes the answer.

From a reachable configuration, two events A and B of different producers
(or of no declared producer) can arrive in either order. The pair is
*order-sensitive* there when "A then B" and "B then A" end in different
configurations or classify an event differently (applied in one order and
rejected in the other, or rejected with another reason). Each order is run
with the explorer's own macrosteps (`Node.outcomes`), so data guards are
taken both ways exactly as the exploration takes them: an order's outcome is
the set of its branches, and the two orders are order-sensitive when those
sets differ. Every finding names the data-guard assumptions of the branches
it shows.

Where neither event fires (both are rejected or already applied) the pair
commutes trivially: neither order changes the configuration, so each event
is classified as it would be alone. Only configurations where at least one
of the two fires are examined.

`find_races(chart, options)` explores the chart and returns a `RaceReport`;
`races_of(exploration)` does the same for an exploration at hand (the lint
rules reuse the one in `ChartFacts`). A race is *decided* when an entry of
the chart's `races:` names the same two events and, if it has `in:`, that
state is active in the race's configuration.

The shape of `RaceReport`, `Race`, `OrderOutcome` and `Classification` is
stable: the coverage report and `statekit races --format json` read it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from statekit.analysis.exploration import Exploration, Limit, MacrostepBranch, Node
from statekit.analysis.guards import Assumption
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.compiler.ir import CompiledChart, RaceDecision
from statekit.engine.tables import Configuration

APPLIED = "APPLIED"


@dataclass(frozen=True, slots=True)
class Classification:
    """How one event was answered: `status` is `APPLIED`, `REJECTED` or
    `ALREADY_APPLIED`, `reason` the reason code of a rejection (None otherwise)."""

    event: str
    status: str
    reason: str | None

    def text(self) -> str:
        """`TaskCompleted APPLIED`, `TaskCancelled REJECTED TERMINAL_STATE`."""
        return " ".join(x for x in (self.event, self.status, self.reason) if x)


@dataclass(frozen=True, slots=True)
class OrderOutcome:
    """One order of a pair delivered from the race's configuration, under one set of
    data-guard assumptions: the answer to the event delivered first and second, and
    the active atomic states (dotted paths) at the end."""

    order: tuple[str, str]
    first: Classification
    second: Classification
    configuration: tuple[str, ...]
    assumptions: tuple[Assumption, ...] = ()
    transitions: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """The transitions each event fired (ids), first and second."""

    def text(self) -> str:
        """`A APPLIED, then B REJECTED TERMINAL_STATE → {completed}`."""
        end = "{" + ", ".join(self.configuration) + "}"
        return f"{self.first.text()}, then {self.second.text()} → {end}"

    def classification(self, event: str) -> Classification:
        """How `event` was answered in this order."""
        return self.first if self.first.event == event else self.second


@dataclass(frozen=True, slots=True)
class Race:
    """An order-sensitive pair of events in one reachable configuration.

    `events` are (A, B) in declaration order; `orders` are one outcome of "A then
    B" and one of "B then A" that the other order cannot give (the first such
    branch of each; `alternatives` holds every branch of each order).
    `configuration` is the configuration's active atomic states as dotted paths
    (as `State.leaves` gives them), `active` all its active state ids (as
    `State.active_ids`), `node` the exploration node first found in
    it and `path` the events of the shortest known path to it. `producers` are
    the events' producers (None: none declared). `decision` is the `races:` entry
    that decides it, if any. `assumptions` are the data-guard assumptions of the
    two outcomes shown.
    """

    events: tuple[str, str]
    configuration: tuple[str, ...]
    active: frozenset[int]
    node: int
    path: tuple[str, ...]
    orders: tuple[OrderOutcome, OrderOutcome]
    alternatives: tuple[tuple[OrderOutcome, ...], tuple[OrderOutcome, ...]]
    producers: tuple[str | None, str | None]
    decision: RaceDecision | None = None

    @property
    def decided(self) -> bool:
        """Whether an entry of `races:` decides this race."""
        return self.decision is not None

    @property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The data-guard assumptions of the two outcomes shown (each once)."""
        return tuple(dict.fromkeys(self.orders[0].assumptions + self.orders[1].assumptions))


@dataclass(frozen=True, slots=True)
class RaceReport:
    """Every race of a chart, in breadth-first order of their configurations (pairs in
    declaration order within one), and the exploration they were found in.

    `complete` is False when the exploration hit a bound (`limits`): races past
    it are not found. `unmatched` are the `races:` entries that decide no race
    found (stale decisions).
    """

    chart: CompiledChart
    races: tuple[Race, ...]
    exploration: Exploration = field(repr=False)
    unmatched: tuple[RaceDecision, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether the exploration was complete (no race can be missing)."""
        return self.exploration.complete

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The bounds the exploration hit."""
        return tuple(self.exploration.limits)

    @property
    def undecided(self) -> tuple[Race, ...]:
        """The races no `races:` entry decides."""
        return tuple(r for r in self.races if not r.decided)

    def to_json(self) -> list[dict[str, Any]]:
        """One object per race (the form of `statekit races --format json`): `events`,
        `producers`, `configuration`, `path`, `decided`, `decision` (`{name, text}` or
        null), `orders` (A then B first: `events`, `answers` (`{event, status, reason}`
        each), `configuration`, `assumptions`) and `assumptions`, plus `chart` and
        `file`."""
        chart = self.chart
        return [
            {
                "chart": chart.name,
                "file": chart.file,
                "events": list(race.events),
                "producers": list(race.producers),
                "configuration": list(race.configuration),
                "path": list(race.path),
                "decided": race.decided,
                "decision": (
                    {"name": race.decision.name, "text": race.decision.decision}
                    if race.decision is not None
                    else None
                ),
                "orders": [_order_json(chart, order) for order in race.orders],
                "assumptions": [a.describe(chart) for a in race.assumptions],
            }
            for race in self.races
        ]


def find_races(chart: CompiledChart, options: ExplorationOptions | None = None) -> RaceReport:
    """Explore `chart` (under `options`) and find its races (see the module docstring)."""
    return races_of(explore_with(chart, options or ExplorationOptions()))


_last: list[RaceReport] = []
"""The report `races_in` made last (lint's two race rules read the same exploration)."""


def races_in(exploration: Exploration) -> RaceReport:
    """`races_of(exploration)`, made once for the exploration asked about last."""
    if _last and _last[0].exploration is exploration:
        return _last[0]
    report = races_of(exploration)
    _last[:] = [report]
    return report


def producer_of(chart: CompiledChart) -> dict[str, str]:
    """Event name → the one producer that sends it (events of no producer, or listed under
    several, are absent: they can race with any event)."""
    found: dict[str, str | None] = {}
    for p in chart.producers:
        for event in p.events:
            found[event] = p.name if event not in found else None
    return {event: name for event, name in found.items() if name is not None}


def may_race(producers: Mapping[str, str], a: str, b: str) -> bool:
    """Whether events `a` and `b` can arrive in either order: not of one producer."""
    pa = producers.get(a)
    return pa is None or pa != producers.get(b)


def races_of(exploration: Exploration) -> RaceReport:
    """The races of an explored chart (see the module docstring)."""
    chart = exploration.chart
    producers = producer_of(chart)
    pairs = [(a, b) for a, b in combinations(exploration.events, 2) if may_race(producers, a, b)]
    search = _Search(exploration)
    found: list[Race] = []
    seen: set[tuple[str, str, Configuration]] = set()
    for node in exploration.nodes:
        by_event = search.by_event(node)
        for a, b in pairs:
            if (a, b, node.config) in seen:
                continue
            race = search.race(node, by_event, a, b, producers)
            if race is not None:
                seen.add((a, b, node.config))
                found.append(race)
    used: set[int] = set()
    races = tuple(_decide(chart, race, used) for race in found)
    unmatched = tuple(d for i, d in enumerate(chart.races) if i not in used)
    return RaceReport(chart=chart, races=races, exploration=exploration, unmatched=unmatched)


def _decide(chart: CompiledChart, race: Race, used: set[int]) -> Race:
    pair = frozenset(race.events)
    for i, decision in enumerate(chart.races):
        if frozenset(decision.events) != pair:
            continue
        if decision.state_ref is not None and (
            decision.state is None or decision.state not in race.active
        ):
            continue
        used.add(i)
        return Race(
            events=race.events,
            configuration=race.configuration,
            active=race.active,
            node=race.node,
            path=race.path,
            orders=race.orders,
            alternatives=race.alternatives,
            producers=race.producers,
            decision=decision,
        )
    return race


OutcomeKey = tuple[Classification, Classification, tuple[str, ...]]
"""An order's outcome without its assumptions: A's answer, B's answer, the end."""


class _Search:
    """Both orders of a pair from one node, over the exploration's own branches."""

    def __init__(self, exploration: Exploration) -> None:
        self.exploration = exploration
        self.chart = exploration.chart
        self.grouped: dict[int, dict[str, list[MacrostepBranch]]] = {}
        self.leaves: dict[Configuration, tuple[str, ...]] = {}

    def by_event(self, node: Node) -> dict[str, list[MacrostepBranch]]:
        found = self.grouped.get(node.id)
        if found is None:
            found = {}
            for outcome in node.outcomes or ():
                if outcome.event is not None:
                    found.setdefault(outcome.event, []).append(outcome)
            self.grouped[node.id] = found
        return found

    def configuration(self, config: Configuration) -> tuple[str, ...]:
        found = self.leaves.get(config)
        if found is None:
            states = self.chart.states
            found = self.leaves[config] = tuple(states[s].path for s in config.atomic)
        return found

    def orders(self, node: Node, first: str, second: str) -> Iterator[OrderOutcome]:
        """Every branch of `first` then `second` from `node` (branches that leave the
        explored part are skipped)."""
        nodes = self.exploration.nodes
        for a in self.by_event(node).get(first, ()):
            middle = _after(node, a)
            if middle < 0:
                continue
            for b in self.by_event(nodes[middle]).get(second, ()):
                end = _after(nodes[middle], b)
                if end < 0:
                    continue
                yield OrderOutcome(
                    order=(first, second),
                    first=_classification(a),
                    second=_classification(b),
                    configuration=self.configuration(nodes[end].config),
                    assumptions=a.assumptions + b.assumptions,
                    transitions=(a.transitions(), b.transitions()),
                )

    def race(
        self,
        node: Node,
        by_event: dict[str, list[MacrostepBranch]],
        a: str,
        b: str,
        producers: Mapping[str, str],
    ) -> Race | None:
        """The race of (a, b) at `node`, or None when the two orders agree."""
        if not any(o.fired for o in by_event.get(a, ())) and not any(
            o.fired for o in by_event.get(b, ())
        ):
            return None
        ab = tuple(self.orders(node, a, b))
        ba = tuple(self.orders(node, b, a))
        keys_ab = {_key(o, a) for o in ab}
        keys_ba = {_key(o, a) for o in ba}
        if keys_ab == keys_ba:
            return None
        shown_ab = next((o for o in ab if _key(o, a) not in keys_ba), ab[0] if ab else None)
        shown_ba = next((o for o in ba if _key(o, a) not in keys_ab), ba[0] if ba else None)
        if shown_ab is None or shown_ba is None:
            return None
        path = tuple(o.event for _p, o in self.exploration.path(node.id) if o.event is not None)
        return Race(
            events=(a, b),
            configuration=self.configuration(node.config),
            active=node.config.ids,
            node=node.id,
            path=path,
            orders=(shown_ab, shown_ba),
            alternatives=(ab, ba),
            producers=(producers.get(a), producers.get(b)),
        )


def _order_json(chart: CompiledChart, order: OrderOutcome) -> dict[str, Any]:
    return {
        "events": list(order.order),
        "answers": [
            {"event": c.event, "status": c.status, "reason": c.reason}
            for c in (order.first, order.second)
        ],
        "configuration": list(order.configuration),
        "assumptions": [a.describe(chart) for a in order.assumptions],
    }


def _after(node: Node, outcome: MacrostepBranch) -> int:
    """The node an outcome from `node` leads to (itself when nothing fired; negative:
    not explored)."""
    if outcome.fired:
        return outcome.target
    return node.id


def _classification(outcome: MacrostepBranch) -> Classification:
    assert outcome.event is not None
    return Classification(
        event=outcome.event,
        status=outcome.status.value,
        reason=None if outcome.fired else outcome.reason,
    )


def _key(outcome: OrderOutcome, a: str) -> OutcomeKey:
    """The outcome as A's answer, B's answer and the end, whatever the order."""
    if outcome.first.event == a:
        return (outcome.first, outcome.second, outcome.configuration)
    return (outcome.second, outcome.first, outcome.configuration)

"""Races: pairs of events whose order of arrival changes the answer.

From a reachable configuration, two events A and B of different producers
(of an unordered one, or of no declared producer) can arrive in either order. The pair is
*order-sensitive* there when "A then B" and "B then A" end in different
configurations or classify an event differently (applied in one order and
rejected in the other, or rejected with another reason). Each order is run
with the explorer's own macrosteps (`Node.outcomes`), so data guards are
taken both ways exactly as the exploration takes them: an order's outcome is
the set of its branches, and the two orders are order-sensitive when those
sets differ. Every finding names the data-guard assumptions of the branches
it shows.

Timer events (`statekit.analysis.timers`) race with declared events where
they are armed: a timeout can come before or after a result. When the event
delivered first leaves the timer's state, the timer delivered second is no
longer armed and is answered as the engine answers it, REJECTED STALE_TIMER,
changing nothing; the timer's own answer is no difference (a cancelled
timer loses nothing), so such a pair is order-sensitive only when it ends in
different configurations or the declared event is answered differently. Two
timer events are not paired: their order is the
clock's (their due times), not a sender's.

Where neither event fires (both are rejected or already applied) the pair
commutes trivially: neither order changes the configuration, so each event
is classified as it would be alone. Only configurations where at least one
of the two fires are examined.

`find_races(chart, options)` explores the chart and returns a `RaceReport`;
`races_of(exploration)` does the same for an exploration at hand (the lint
rules reuse the one in `ChartFacts`). Which pairs are examined (producers,
ordering facts) and which entry decides a race are
`statekit.analysis.race_decisions`'s to say.

The shape of `RaceReport`, `Race`, `OrderOutcome` and `Classification` is
stable: the coverage report and `statekit races --format json` read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statekit.analysis.exploration import NOWHERE, Exploration, Limit, MacrostepBranch, Node
from statekit.analysis.guards import Assumption
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.analysis.race_decisions import RaceDecisions
from statekit.compiler.ir import CompiledChart, RaceDecision
from statekit.engine.result import STALE_TIMER, Status
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


def races_of(exploration: Exploration) -> RaceReport:
    """The races of an explored chart (see the module docstring)."""
    chart = exploration.chart
    decisions = RaceDecisions(chart)
    producers = decisions.producers
    pairs = decisions.pairs(exploration.events, exploration.timer_events)
    search = _Search(exploration)
    found: list[Race] = []
    seen: set[tuple[str, str, Configuration]] = set()
    for node in exploration.nodes:
        fired = search.fired(node)
        if not fired:
            continue  # neither order of any pair changes anything here
        for a, b in pairs:
            if a not in fired and b not in fired:
                continue
            if (a, b, node.config) in seen:
                continue
            race = search.race(node, a, b, producers, decisions)
            if race is not None:
                seen.add((a, b, node.config))
                found.append(race)
    unmatched = decisions.unmatched()
    return RaceReport(chart=chart, races=tuple(found), exploration=exploration, unmatched=unmatched)


Answer = tuple[str, str | None]
"""An event's answer as (status, reason), the form the search compares."""
Branch = tuple[MacrostepBranch, Answer, int]
"""One branch of an event from a node: the outcome, its answer, the node it leads to
(negative: not explored)."""
Combination = tuple[Answer, Answer, Configuration, MacrostepBranch, MacrostepBranch]
"""One branch of an order: the first and second event's answers, where it ends, and the
two outcomes."""


class _Search:
    """Both orders of a pair from one node, over the exploration's own branches.

    The comparison works on plain tuples (answers and interned configurations);
    `OrderOutcome` records are made only for the races found.
    """

    def __init__(self, exploration: Exploration) -> None:
        self.exploration = exploration
        self.chart = exploration.chart
        self.grouped: list[dict[str, list[Branch]] | None] = [None] * len(exploration.nodes)
        self.leaves: dict[Configuration, tuple[str, ...]] = {}
        self.classifications: dict[tuple[str, Answer], Classification] = {}
        self.paths: dict[int, tuple[str, ...]] = {}
        self.timers = frozenset(exploration.timer_events)

    def by_event(self, node: Node) -> dict[str, list[Branch]]:
        """Event → its branches from `node` (cached per node)."""
        found = self.grouped[node.id]
        if found is None:
            found = {}
            for outcome in node.outcomes or ():
                if outcome.event is not None:
                    branch: Branch
                    if outcome.fired:
                        branch = (outcome, (APPLIED, None), outcome.target)
                    else:
                        branch = (outcome, (outcome.status.value, outcome.reason), node.id)
                    found.setdefault(outcome.event, []).append(branch)
            self.grouped[node.id] = found
        return found

    def fired(self, node: Node) -> frozenset[str]:
        """The events with a branch that fires from `node`."""
        return frozenset(
            event
            for event, branches in self.by_event(node).items()
            if any(answer[0] == APPLIED for _o, answer, _t in branches)
        )

    def configuration(self, config: Configuration) -> tuple[str, ...]:
        found = self.leaves.get(config)
        if found is None:
            states = self.chart.states
            found = self.leaves[config] = tuple(states[s].path for s in config.atomic)
        return found

    def combinations(self, node: Node, first: str, second: str) -> list[Combination]:
        """Every branch of `first` then `second` from `node` (branches that leave the
        explored part are skipped)."""
        nodes = self.exploration.nodes
        out: list[Combination] = []
        for a, answer_a, middle in self.by_event(node).get(first, ()):
            if middle < 0:
                continue
            branches = self.by_event(nodes[middle]).get(second)
            if branches is None and second in self.timers:
                branches = [self.stale(second, middle)]  # the first event cancelled it
            for b, answer_b, end in branches or ():
                if end >= 0:
                    out.append((answer_a, answer_b, nodes[end].config, a, b))
        return out

    def stale(self, timer: str, node: int) -> Branch:
        """A timer event delivered where it is no longer armed: the engine answers
        REJECTED STALE_TIMER and changes nothing."""
        outcome = MacrostepBranch(
            event=timer,
            assumptions=(),
            target=NOWHERE,
            steps=(),
            status=Status.REJECTED,
            reason=STALE_TIMER,
            basis="stale",
        )
        return (outcome, (outcome.status.value, STALE_TIMER), node)

    def race(
        self, node: Node, a: str, b: str, producers: Mapping[str, str], decisions: RaceDecisions
    ) -> Race | None:
        """The race of (a, b) at `node`, or None when the two orders agree."""
        ab = self.combinations(node, a, b)
        ba = self.combinations(node, b, a)
        timer = b in self.timers  # a timer is always second in a pair

        def key(answer_a: Answer, answer_b: Answer, end: Configuration) -> object:
            # a timer's own answer (fired, or stale because A left its state) is no
            # difference: only where the pair ends and how A is answered are
            return (answer_a, end) if timer else (answer_a, answer_b, end)

        keys_ab = {key(x, y, end) for x, y, end, _a, _b in ab}
        keys_ba = {key(y, x, end) for x, y, end, _a, _b in ba}  # A's answer first
        if keys_ab == keys_ba or not ab or not ba:
            return None
        shown_ab = next((c for c in ab if key(c[0], c[1], c[2]) not in keys_ba), ab[0])
        shown_ba = next((c for c in ba if key(c[1], c[0], c[2]) not in keys_ab), ba[0])
        orders_ab = tuple(self.outcome((a, b), c) for c in ab)
        orders_ba = tuple(self.outcome((b, a), c) for c in ba)
        active = node.config.ids
        return Race(
            events=(a, b),
            configuration=self.configuration(node.config),
            active=active,
            node=node.id,
            path=self.path(node.id),
            orders=(orders_ab[ab.index(shown_ab)], orders_ba[ba.index(shown_ba)]),
            alternatives=(orders_ab, orders_ba),
            producers=(producers.get(a), producers.get(b)),
            decision=decisions.decide((a, b), active),
        )

    def path(self, node_id: int) -> tuple[str, ...]:
        """The events of the shortest known path to `node_id` (cached: every race in one
        configuration shares it)."""
        nodes, paths = self.exploration.nodes, self.paths
        chain: list[int] = []
        current = node_id
        while current >= 0 and current not in paths:
            chain.append(current)
            current = nodes[current].parent
        path = paths[current] if current >= 0 else ()
        for step in reversed(chain):
            event = nodes[step].via.event
            path = path if event is None else (*path, event)
            paths[step] = path
        return paths[node_id]

    def outcome(self, order: tuple[str, str], combination: Combination) -> OrderOutcome:
        answer_a, answer_b, end, first, second = combination
        return OrderOutcome(
            order=order,
            first=self.classification(order[0], answer_a),
            second=self.classification(order[1], answer_b),
            configuration=self.configuration(end),
            assumptions=first.assumptions + second.assumptions,
            transitions=(first.transitions(), second.transitions()),
        )

    def classification(self, event: str, answer: Answer) -> Classification:
        key = (event, answer)
        found = self.classifications.get(key)
        if found is None:
            found = self.classifications[key] = Classification(event, answer[0], answer[1])
        return found


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

"""Which pairs of events the race analysis examines, and which entry decides a race.

*Examined pairs.* Two events are examined as a possible race unless one of
these says only one order can happen:

- both come from one ordered producer (the list form of `producers:`): it sends
  them in its order. Events of an `unordered: true` producer arrive in any
  order, so pairs among them are examined; an event of no declared producer,
  or listed under several, may race with any event. Each invocation is a
  producer of its own, `invoke.<id>` (`statekit.compiler.chart_set`): the events
  its child sends the parent, then `done.invoke.<id>` or `error.invoke.<id>`,
  in that order; they race with the parent's other producers' events;
- both are timer events: the clock orders them by their due times;
- an ordering fact of `races:` (`precedes: [A, B]`) says an event of its first
  side always arrives before one of its second.

*Decisions.* A race of A and B where the active states are S is covered by a
`races:` entry with A on one side and B on the other (a side is a name, a list
of names, or `"*"`, any event, timer events included) whose `in:` state, if
any, is in S; and by the declaration of an unordered producer that sends both
A and B (it decides every race among its own events). When several cover it,
the most specific decides: the deepest `in:` state first (an entry without
`in:` is the least specific), then a named pair over a name against a list,
over two lists (an unordered producer's declaration counts as two lists), over
anything against `"*"`; among equals, the `races:` entry declared first, then
the producer. Every `races:` entry that covers a race is in use (none of them
is stale).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from statekit.compiler.chart_set import ChartSet, invocation_producers
from statekit.compiler.ir import CompiledChart, Producer, RaceDecision
from statekit.compiler.race_ir import RaceSide


def producer_of(chart: CompiledChart, implicit: Sequence[Producer] = ()) -> dict[str, str]:
    """Event name → the one producer that sends it, of the chart's `producers:` and the
    `implicit` ones (events of no producer, or listed under several, are absent: they can
    race with any event)."""
    found: dict[str, str | None] = {}
    for p in (*chart.producers, *implicit):
        for event in p.events:
            found[event] = p.name if event not in found else None
    return {event: name for event, name in found.items() if name is not None}


def producer_decision(producer: Producer) -> RaceDecision | None:
    """The decision an unordered producer's declaration makes (every race among its own
    events), named `producers.<name>`; None for an ordered producer."""
    if not producer.unordered:
        return None
    side = RaceSide(events=producer.events, spans=(), span=producer.span, listed=True)
    return RaceDecision(
        name=f"producers.{producer.name}",
        sides=(side, side),
        decision=producer.decision or "",
        state_ref=None,
        state=None,
        span=producer.span,
        producer=producer.name,
    )


class RaceDecisions:
    """The chart's producers, ordering facts and decisions, asked pair by pair.

    `used` collects the indexes (in `chart.races`) of the entries that covered a race
    `decide` was asked about.
    """

    def __init__(self, chart: CompiledChart, chart_set: ChartSet | None = None) -> None:
        self.chart = chart
        self.producers = producer_of(chart, invocation_producers(chart, chart_set))
        self.unordered = frozenset(p.name for p in chart.producers if p.unordered)
        self.orderings = tuple(d for d in chart.races if d.precedes)
        entries: list[tuple[int, RaceDecision]] = [
            (i, d) for i, d in enumerate(chart.races) if not d.precedes
        ]
        for producer in chart.producers:
            made = producer_decision(producer)
            if made is not None:
                entries.append((-1, made))
        self.entries = tuple(entries)
        self.used: set[int] = set()

    def may_race(self, a: str, b: str) -> bool:
        """Whether producers let `a` and `b` arrive in either order: not both of one
        ordered producer."""
        pa = self.producers.get(a)
        return pa is None or pa != self.producers.get(b) or pa in self.unordered

    def ordering(self, a: str, b: str) -> RaceDecision | None:
        """The first ordering fact that orders `a` and `b` (either before the other)."""
        for fact in self.orderings:
            if fact.covers(a, b) or fact.covers(b, a):
                return fact
        return None

    def pairs(self, events: Sequence[str], timer_events: Sequence[str]) -> list[tuple[str, str]]:
        """The pairs the analysis examines, in declaration order (declared events, then
        timer events; a timer is always the second of its pair)."""
        timers = frozenset(timer_events)
        return [
            (a, b)
            for a, b in combinations((*events, *timer_events), 2)
            if a not in timers  # two timers: the clock orders them
            and self.may_race(a, b)
            and self.ordering(a, b) is None
        ]

    def decide(self, events: tuple[str, str], active: frozenset[int]) -> RaceDecision | None:
        """The decision of the race of `events` where `active` are the active states: of
        the entries that cover it (every `races:` entry among them is marked used), the
        most specific (see the module docstring)."""
        a, b = events
        best: RaceDecision | None = None
        best_key = (-1, (-1, -1))
        for i, decision in self.entries:
            if not decision.covers(a, b):
                continue
            if decision.state_ref is None:
                depth = 0
            elif decision.state is not None and decision.state in active:
                depth = 1 + self.chart.states[decision.state].depth
            else:
                continue
            if i >= 0:
                self.used.add(i)
            key = (depth, decision.specificity)
            if key > best_key:
                best, best_key = decision, key
        return best

    def unmatched(self) -> tuple[RaceDecision, ...]:
        """The `races:` decisions (not ordering facts) that covered no race asked about."""
        return tuple(
            d for i, d in enumerate(self.chart.races) if not d.precedes and i not in self.used
        )

    def orders_nothing(
        self, fact: RaceDecision, events: Sequence[str], timers: Sequence[str]
    ) -> bool:
        """Whether the ordering fact orders no pair producers let race (two timers aside)."""
        timer_set = frozenset(timers)
        return not any(
            a not in timer_set and self.may_race(a, b) and (fact.covers(a, b) or fact.covers(b, a))
            for a, b in combinations((*events, *timers), 2)
        )

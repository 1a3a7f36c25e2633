"""The compiled `producers:` and `races:` entries: who sends which events, decided races
and ordering facts.

They change no answer (they are not part of the chart's digest); the race
analysis (`statekit.analysis.race_decisions`) reads them to choose which pairs
of events it examines and which entry decides a race it finds.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.diagnostics import SourceSpan

ANY_EVENT = "*"
"""A race side that stands for every event of the chart (timer events included)."""


@dataclass(frozen=True, slots=True)
class Producer:
    """One entry of `producers:`: a sender and the events it sends.

    An ordered producer (the list form) sends its events in order, so they never
    race with each other. An `unordered` one (`{events, unordered: true, decision}`)
    sends them in any order: races among them are examined, and `decision` (the
    author's prose, required then) decides every one of them.
    """

    name: str
    events: tuple[str, ...]
    span: SourceSpan
    unordered: bool = False
    decision: str | None = None


@dataclass(frozen=True, slots=True)
class RaceSide:
    """One side of a `races:` entry as written: an event's name, a list of them (a set),
    or `"*"` (any event). `events` is empty for `"*"`; `spans` are the names' positions,
    `span` the side's own."""

    events: tuple[str, ...]
    spans: tuple[SourceSpan, ...]
    span: SourceSpan
    listed: bool = False

    @property
    def any(self) -> bool:
        """Whether the side is `"*"`: every event."""
        return not self.events

    def covers(self, event: str) -> bool:
        """Whether `event` is on this side."""
        return not self.events or event in self.events

    def text(self) -> str:
        """The side as the YAML writes it: `A`, `[A, B]` or `*`."""
        if self.any:
            return ANY_EVENT
        return f"[{', '.join(self.events)}]" if self.listed else self.events[0]

    @property
    def rank(self) -> int:
        """How specific the side is: a named event 2, a list 1, `"*"` 0."""
        return 0 if self.any else 1 if self.listed else 2


@dataclass(frozen=True, slots=True)
class RaceDecision:
    """One entry of `races:`, or the declaration of an unordered producer.

    A decision (`events: [A, B]`) is the author's statement of who wins a race
    of an event on one side against an event on the other and why; an ordering
    fact (`precedes: [A, B]`, `precedes` is True) says an event of the first
    side always arrives before one of the second, so those pairs never race.
    `sides` are the two sides as written; `state` the state a decision is
    limited to (`in:`), resolved to an id, or None when there is no `in:` or it
    names no state (`state_ref` keeps what was written; the stale-race-decision
    rule reports unknown names). `span` is the entry's key, `state_span` the
    `in:` value. `producer` names the unordered producer whose declaration this
    is (its name is then `producers.<name>`), None for an entry of `races:`.
    """

    name: str
    sides: tuple[RaceSide, RaceSide]
    decision: str
    state_ref: str | None
    state: int | None
    span: SourceSpan
    state_span: SourceSpan | None = None
    precedes: bool = False
    producer: str | None = None

    @property
    def events(self) -> tuple[str, str]:
        """The two sides as written (`A`, `[A, B]`, `*`)."""
        return (self.sides[0].text(), self.sides[1].text())

    @property
    def event_spans(self) -> tuple[SourceSpan, SourceSpan]:
        """The two sides' positions."""
        return (self.sides[0].span, self.sides[1].span)

    def covers(self, a: str, b: str) -> bool:
        """Whether the pair `a`, `b` (two different events) has one event on each side,
        in either order (for an ordering fact: `a` on the first side, `b` on the second)."""
        first, second = self.sides
        if self.precedes:
            return a != b and first.covers(a) and second.covers(b)
        return a != b and (
            (first.covers(a) and second.covers(b)) or (first.covers(b) and second.covers(a))
        )

    @property
    def specificity(self) -> tuple[int, int]:
        """The sides' ranks, the less specific first: a named pair (2, 2) is more specific
        than a name against a list (1, 2), than two lists (1, 1), than anything against
        `"*"` (0, ...)."""
        low, high = sorted(side.rank for side in self.sides)
        return (low, high)

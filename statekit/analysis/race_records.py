"""The records of the race analysis: how an event was answered, one order's outcome, and a
pair's race with the configurations it occurs in.

A pair's *class* says how its two orders differ where they differ most:
`RACE` (some branch ends in another state: configuration, history, context,
armed timers or emitted messages), `INFO` (the same end state either way, but
an event is answered differently: applied in one order and rejected in the
other, or rejected for another reason) or `CONVERGENT` (the same end state and
the same answers in every branch). `statekit.analysis.races` finds them.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis.guards import Assumption
from statekit.compiler.ir import RaceDecision

APPLIED = "APPLIED"

RACE = "race"
"""A pair whose orders end in different states somewhere: `undecided-race` reports it."""
INFO = "info"
"""A pair whose orders end alike but answer an event differently: `order-dependent-answer`."""
CONVERGENT = "convergent"
"""A pair whose orders end alike with the same answers everywhere: reported by no rule."""

CONFIGURATION = "configuration"
HISTORY = "history"
ANSWERS = "answers"

RANKS = {CONFIGURATION: 4, HISTORY: 3, "context": 2, "timers": 2, "messages": 2, ANSWERS: 1}
"""How much a difference matters, for choosing the configuration a race is shown at:
another end configuration before other recorded history, before another context, timers
or messages, before other answers."""


def class_of(difference: str | None) -> str:
    """The class of an occurrence whose orders differ in `difference` (None: not at all)."""
    if difference is None:
        return CONVERGENT
    return INFO if difference == ANSWERS else RACE


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
class RaceOccurrence:
    """One reachable configuration where a pair was examined (at least one of its events
    fires there): its active atomic states, all its active state ids, the exploration
    node, the events of the shortest known path to it, its class, what its orders differ
    in (None: nothing) and the `races:` entry that decides it there (never for a
    convergent occurrence)."""

    configuration: tuple[str, ...]
    active: frozenset[int]
    node: int
    path: tuple[str, ...]
    race_class: str
    difference: str | None
    decision: RaceDecision | None = None


@dataclass(frozen=True, slots=True)
class Race:
    """A pair of events whose order of arrival may matter, shown at one configuration.

    `events` are (A, B) in declaration order; `orders` are one outcome of "A then
    B" and one of "B then A" that differ the most there (`alternatives` holds every
    branch of each order). `configuration` is the shown configuration's active
    atomic states as dotted paths (as `State.leaves` gives them), `active` all its
    active state ids (as `State.active_ids`), `node` the exploration node first
    found in it and `path` the events of the shortest known path to it.
    `producers` are the events' producers (None: none declared). `decision` is the
    `races:` entry that decides it (None while any of its order-sensitive
    occurrences is undecided). `race_class` is `race`, `info` or `convergent`, `difference`
    what the shown orders differ in, and `elsewhere` the pair's other
    configurations of that kind (every other order-sensitive one; for a convergent
    pair, every other one examined), each with its own class and decision.
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
    race_class: str = RACE
    difference: str | None = CONFIGURATION
    elsewhere: tuple[RaceOccurrence, ...] = ()

    @property
    def decided(self) -> bool:
        """Whether `races:` entries decide it (every occurrence of its class)."""
        return self.decision is not None

    @property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The data-guard assumptions of the two outcomes shown (each once)."""
        return tuple(dict.fromkeys(self.orders[0].assumptions + self.orders[1].assumptions))

    @property
    def occurrences(self) -> int:
        """How many configurations it is counted in: the shown one and `elsewhere`."""
        return 1 + len(self.elsewhere)

    @property
    def places(self) -> tuple[RaceOccurrence, ...]:
        """The shown configuration as an occurrence (its decision is `decision`: the
        shown one is undecided while any is), then `elsewhere`."""
        shown = RaceOccurrence(
            configuration=self.configuration,
            active=self.active,
            node=self.node,
            path=self.path,
            race_class=self.race_class,
            difference=self.difference,
            decision=self.decision,
        )
        return (shown, *self.elsewhere)

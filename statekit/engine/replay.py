"""Folding a history of events into a state, stopping at the first one that does not apply.

A history is what the runner stores: the events that were accepted, in
order. Replaying it from the initial state must give the live state again.
`ALREADY_APPLIED` events are folded (they change nothing); the first
`REJECTED` event stops the replay, and the result says which event (its
index) and why (its `Result`). Nothing is ever skipped.

Time: an event may be a timer's delivery (`Event.timer`: `Chart.fire` of
that timer id, with its generation); a delivery whose event is rejected still
consumes its timer, as it did live, so it is folded (only `STALE_TIMER`
stops the replay). `Event.now_ms` is the clock's reading the event was
applied with, so the due times armed on the way are those of the live run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from statekit.engine.result import STALE_TIMER, Result, Status
from statekit.engine.state import State


class EventSender(Protocol):
    """What a history is folded with: a `Chart` (its `start` and `send`)."""

    def start(
        self, context: Mapping[str, Any] | None = None, *, instance_id: str | None = None
    ) -> State:
        """The initial state."""
        ...

    def send(
        self,
        state: State,
        event_type: str,
        payload: Mapping[str, Any] | None = None,
        *,
        event_id: str | None = None,
        now_ms: int | None = None,
        instance_id: str | None = None,
    ) -> Result:
        """Classify and apply one event."""
        ...

    def fire(
        self,
        state: State,
        timer_id: str,
        *,
        generation: int | None = None,
        now_ms: int | None = None,
        event_id: str | None = None,
        instance_id: str | None = None,
    ) -> Result:
        """Deliver an armed timer."""
        ...


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a history: its type, payload and (optional) event ID.

    `timer` is set when the event is a timer's delivery (the timer's id, `type`
    then being the event it delivers, `payload` ignored), with the `generation`
    that armed it; `now_ms` is the clock's reading it was applied with (None:
    none).
    """

    type: str
    payload: Mapping[str, Any] | None = None
    id: str | None = None
    timer: str | None = None
    generation: int | None = None
    now_ms: int | None = None


EventLike = (
    Event
    | tuple[str]
    | tuple[str, Mapping[str, Any] | None]
    | tuple[str, Mapping[str, Any] | None, str | None]
)
"""An `Event`, or a tuple `(type,)`, `(type, payload)` or `(type, payload, event_id)`."""


class ReplayError(Exception):
    """Raised by `replay` (and `ReplayResult.unwrap`) when an event of the history
    does not apply; `.index`, `.event` and `.result` say which and why, `.state`
    is the state before it."""

    def __init__(self, index: int, event: Event, result: Result, state: State) -> None:
        self.index = index
        self.event = event
        self.result = result
        self.state = state
        why = result.reason if result.message is None else f"{result.reason}: {result.message}"
        super().__init__(f"event #{index} ({event.type}) does not apply: {why}")


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The outcome of folding a history.

    `state` is the state after the last event that applied; `applied` counts
    the events folded; `stopped_at` is the index of the first rejected event
    (None when all applied) and `rejection` its result.
    """

    state: State
    applied: int
    stopped_at: int | None = None
    stopped_event: Event | None = None
    rejection: Result | None = None

    @property
    def ok(self) -> bool:
        """Whether every event applied (or was already applied)."""
        return self.stopped_at is None

    def unwrap(self) -> State:
        """The final state, or `ReplayError` for the event that stopped the replay."""
        if self.stopped_at is not None:
            assert self.stopped_event is not None and self.rejection is not None
            raise ReplayError(self.stopped_at, self.stopped_event, self.rejection, self.state)
        return self.state


def as_event(item: EventLike) -> Event:
    """Normalise a history item to an `Event`."""
    if isinstance(item, Event):
        return item
    if isinstance(item, tuple) and 1 <= len(item) <= 3 and isinstance(item[0], str):
        return Event(*item)
    raise TypeError(f"a history item is an Event or a (type, payload, id) tuple, not {item!r}")


def fold(
    chart: EventSender,
    events: Iterable[EventLike],
    state: State,
    instance_id: str | None = None,
) -> ReplayResult:
    """Send each event in turn (see the module docstring); `instance_id`: what
    `instance.id` reads."""
    applied = 0
    for index, item in enumerate(events):
        event = as_event(item)
        if event.timer is not None:
            result = chart.fire(
                state,
                event.timer,
                generation=event.generation,
                now_ms=event.now_ms,
                event_id=event.id,
                instance_id=instance_id,
            )
        else:
            result = chart.send(
                state,
                event.type,
                event.payload,
                event_id=event.id,
                now_ms=event.now_ms,
                instance_id=instance_id,
            )
        if result.status is Status.REJECTED and (
            result.timer is None or result.reason == STALE_TIMER
        ):
            return ReplayResult(state, applied, index, event, result)
        state = result.state
        applied += 1
    return ReplayResult(state, applied)


def replay(
    chart: EventSender,
    events: Iterable[EventLike],
    *,
    state: State | None = None,
    instance_id: str | None = None,
) -> State:
    """The state after folding `events` from `state` (default: `chart.start()`), each
    step given `instance_id` (what `instance.id` reads).

    Raises `ReplayError` at the first event that does not apply.
    """
    begin = chart.start(instance_id=instance_id) if state is None else state
    return fold(chart, events, begin, instance_id).unwrap()

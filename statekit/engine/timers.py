"""Timers as data: what a state has armed, and the rules that arm, cancel and send.

The engine has no clock. A timer is a record in the state (`ArmedTimer`):
the event it will deliver, the delay or due time it was armed with, and the
arming counter's value when it was armed (`generation`, 1, 2, 3, ... per
instance), so that a replay reproduces it exactly and a delivery of a timer
that is no longer armed is recognisable (`STALE_TIMER`).

The rules (run by `statekit.engine.timer_effects` for the effect
interpreter, in the order of the microstep's effect segments, see
`statekit.engine.plans`):

- entering a state arms each of its `after` timers, in declaration order,
  after the state's own `entry` effects (`delay:`/`at:` evaluated then, over
  the context as those effects left it);
- exiting a state cancels its armed `after` timers, after the state's own
  `exit` effects;
- `send` with a delay (a non-zero literal, `delay: expr` whatever its value,
  or `at: expr`) arms a timer owned by no state: it stays armed, whatever
  states are left, until it is delivered or cancelled by id; arming an id
  that is armed replaces that timer. A `send` without a delay (or
  `delay: 0ms`) is a `SentEvent`, returned in `Result.sent` and never
  processed inside the macrostep; with an `id:`, it also cancels a timer
  armed under that id;
- `cancel: name` removes the timer armed under that id (nothing when none is).

`due_ms` is `at`'s value, or the step's `now_ms` plus the delay when the
step was given the clock's reading (clamped to the 64-bit range), else None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.ir import TimerDecl
from statekit.engine.validation import INT_MAX, INT_MIN

__all__ = [
    "NO_TIMERS",
    "ArmTimers",
    "ArmedTimer",
    "CancelTimers",
    "SentEvent",
    "TimerRun",
    "Timers",
]


@dataclass(frozen=True, slots=True)
class ArmedTimer:
    """A timer armed in a state: it will deliver `event` (with `payload`) when due.

    `id` is the timer event's name for an `after` timer (`after(15m)@processing`),
    the `send`'s `id:` for a delayed send, or `send(<EVENT>)#<generation>` when it
    has none. `delay_ms` is the relative delay as evaluated (None for `at`;
    negative kept as given); `due_ms` the absolute due time in epoch milliseconds
    when known (`at`, or a relative delay armed by a step given `now_ms`), else
    None. `generation` is the instance's arming counter when it was armed;
    `owner` the owning state's path for an `after` timer, None for a `send`.
    """

    id: str
    event: str
    payload: Mapping[str, Any]
    delay_ms: int | None
    due_ms: int | None
    generation: int
    owner: str | None

    def __hash__(self) -> int:  # the payload is a read-only mapping: not hashable itself
        return hash((self.id, self.event, self.delay_ms, self.due_ms, self.generation))

    def to_data(self) -> dict[str, Any]:
        """The JSON-ready form a state writes."""
        return {
            "id": self.id,
            "event": self.event,
            "payload": dict(self.payload),
            "delay_ms": self.delay_ms,
            "due_ms": self.due_ms,
            "generation": self.generation,
            "owner": self.owner,
        }


@dataclass(frozen=True, slots=True)
class SentEvent:
    """An undelayed `send`: an event for this instance's external queue, to be processed
    after the macrostep that sent it (never inside it)."""

    event: str
    payload: Mapping[str, Any]

    def __hash__(self) -> int:
        return hash(self.event)


@dataclass(frozen=True, slots=True)
class Timers:
    """What a state holds of time: the armed timers in arming order and the arming
    counter (0 until the first timer is armed)."""

    armed: tuple[ArmedTimer, ...]
    generation: int

    def find(self, timer_id: str) -> ArmedTimer | None:
        """The armed timer with this id, or None."""
        for timer in self.armed:
            if timer.id == timer_id:
                return timer
        return None


NO_TIMERS = Timers((), 0)
"""The timers of every state that never armed one (shared)."""


@dataclass(frozen=True, slots=True)
class ArmTimers:
    """The engine's effect after a state's `entry` effects: arm its `after` timers."""

    state: str
    timers: tuple[TimerDecl, ...]


@dataclass(frozen=True, slots=True)
class CancelTimers:
    """The engine's effect after a state's `exit` effects: cancel its `after` timers."""

    state: str


class TimerRun:
    """The timers of one macrostep while it runs (created on its first timer effect).

    `armed` starts as the input state's timers; `log` records, per microstep
    index, what was armed, cancelled and sent (for the evidence).
    """

    __slots__ = ("armed", "cancelled", "generation", "log", "now_ms", "sent", "start")

    def __init__(self, timers: Timers, now_ms: int | None) -> None:
        self.armed: list[ArmedTimer] = list(timers.armed)
        self.generation = timers.generation
        self.start = timers.generation
        self.now_ms = now_ms
        self.cancelled: list[ArmedTimer] = []
        self.sent: list[SentEvent] = []
        self.log: list[tuple[int, str, str]] = []

    def arm(self, at: int, timer: ArmedTimer) -> None:
        """Arm `timer` (replacing one armed under its id) in microstep `at`."""
        self.cancel(at, timer.id)
        self.armed.append(timer)
        self.log.append((at, "armed", timer.id))

    def cancel(self, at: int, timer_id: str) -> None:
        """Remove the timer armed under `timer_id`, if any."""
        for i, timer in enumerate(self.armed):
            if timer.id == timer_id:
                del self.armed[i]
                self.cancelled.append(timer)
                self.log.append((at, "cancelled", timer_id))
                return

    def next_generation(self) -> int:
        """The counter's next value (the generation of the timer being armed)."""
        self.generation += 1
        return self.generation

    def due(self, delay_ms: int | None) -> int | None:
        """The due time of a relative delay armed now (None without a clock reading)."""
        if delay_ms is None or self.now_ms is None:
            return None
        return min(max(self.now_ms + delay_ms, INT_MIN), INT_MAX)

    def outcome(self) -> tuple[Timers, tuple[ArmedTimer, ...], tuple[ArmedTimer, ...]]:
        """The timers at the end, those armed by the macrostep and still armed (arming
        order), and those armed before it that it cancelled (cancelling order)."""
        armed = tuple(self.armed)
        new = tuple(t for t in armed if t.generation > self.start)
        gone = tuple(t for t in self.cancelled if t.generation <= self.start)
        return Timers(armed, self.generation), new, gone

    def microstep_log(self, index: int, kind: str) -> tuple[str, ...]:
        """The ids (or sent event names) of one kind recorded in microstep `index`."""
        return tuple(name for at, k, name in self.log if at == index and k == kind)

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
- `cancel: name` removes the timer armed under that id (nothing when none is);
- `pause: name` pauses the running timers named `name` (a `send`'s id, or the `id:`
  of an `after` timer): each is armed again, under the next generation, with no due
  time and the time it had left (`paused_ms`: its due time minus `now_ms`; without
  a clock reading or a due time, its delay, 0 for an `at:` timer); `resume: name`
  arms each paused one again, under the next generation, due at `now_ms` plus that
  time (no due time without a clock reading). A timer that is not armed, or already
  in the state asked for, is left as it is. A paused `after` timer is still its
  state's: leaving the state cancels it.

`due_ms` is `at`'s value, or the step's `now_ms` plus the delay when the
step was given the clock's reading (clamped to the 64-bit range), else None.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import Any, NamedTuple

from statekit.compiler.ir import TimerDecl
from statekit.engine.family_outputs import OutgoingMessage
from statekit.engine.validation import INT_MAX

TIMER_MS_MIN, TIMER_MS_MAX = -INT_MAX, INT_MAX
"""The range of a timer's delay and due time in milliseconds, ±(2^63 - 1): what an
instance's stored timers may hold (`state_timers` reads no other value), so a delay or
due time outside it is refused when the timer is armed (`EvaluationError`), never stored
(-2^63 was stored once and made every later read of its instance fail)."""


MAX_ARMED_TIMERS = 1_000
"""The most timers one instance may have armed: a macrostep that would leave more armed
(and more than it found) is rejected as `TOO_MANY_TIMERS`, nothing changed. An event
costs the same whatever the number armed (the runner writes only the timers it changed,
a step finds one by ID in `Timers.by_id`); a state still holds them all, and a read of
an instance not cached reads them all, so their number is bounded."""


def clamped_due(due: int) -> int:
    """A due time computed as now + delay, brought within the timer range."""
    return due if TIMER_MS_MIN <= due <= TIMER_MS_MAX else max(TIMER_MS_MIN, min(due, TIMER_MS_MAX))


_new = tuple.__new__
"""Builds a named tuple without its Python-level `__new__` (one per timer armed)."""

__all__ = [
    "NO_TIMERS",
    "ArmTimers",
    "ArmedTimer",
    "CancelTimers",
    "SentEvent",
    "TimerRun",
    "Timers",
    "timer_index",
]


# `ArmedTimer`, `SentEvent` and `Timers` are named tuples, not frozen dataclasses, for the
# reason `statekit.engine.trace` gives: one is built per timer armed or cancelled on the
# step's path, and in Python 3.11 a frozen dataclass costs about five times as much to
# construct (measured: 4.5 µs against 0.8 µs for a plain class and less for a tuple),
# which took a third of the task chart's throughput with its lease timer. They are
# immutable, compare by value and are built by keyword like the dataclasses they replace.


class ArmedTimer(NamedTuple):
    """A timer armed in a state: it will deliver `event` (with `payload`) when due.

    `id` is the timer event's name for an `after` timer (`after(15m)@processing`),
    the `send`'s `id:` for a delayed send, or `send(<EVENT>)#<generation>` when it
    has none. `delay_ms` is the relative delay as evaluated (None for `at`;
    negative kept as given); `due_ms` the absolute due time in epoch milliseconds
    when known (`at`, or a relative delay armed by a step given `now_ms`), else
    None. `generation` is the instance's arming counter when it was armed;
    `owner` the owning state's path for an `after` timer, None for a `send`.
    `paused_ms` is the time it had left when a `pause:` paused it (then `due_ms` is
    None and nothing delivers it until a `resume:`), None while it runs. `to` names
    the receiver of a delayed `send` with `to:` (its form has the key only then).
    """

    id: str
    event: str
    payload: Mapping[str, Any]
    delay_ms: int | None
    due_ms: int | None
    generation: int
    owner: str | None
    paused_ms: int | None = None
    to: str | None = None
    """The receiver of a delayed `send` with `to:`: "parent" or the child's invoke id (its
    delivery is the message, `statekit.engine.delayed_messages`); None: this instance."""

    def __hash__(self) -> int:  # the payload is a read-only mapping: not hashable itself
        return hash((self.id, self.event, self.delay_ms, self.due_ms, self.generation))

    def to_data(self) -> dict[str, Any]:
        """The JSON-ready form a state writes (`paused_ms` only when paused: the form of a
        running timer is the one written before timers could pause)."""
        data = {
            "id": self.id,
            "event": self.event,
            "payload": dict(self.payload),
            "delay_ms": self.delay_ms,
            "due_ms": self.due_ms,
            "generation": self.generation,
            "owner": self.owner,
        }
        if self.paused_ms is not None:
            data["paused_ms"] = self.paused_ms
        if self.to is not None:
            data["to"] = self.to
        return data


class SentEvent(NamedTuple):
    """An undelayed `send`: an event for this instance's external queue, to be processed
    after the macrostep that sent it (never inside it)."""

    event: str
    payload: Mapping[str, Any]
    id: str | None = None
    """The `send`'s `id:` (`_event.sendid` of the event it delivers)."""

    def __hash__(self) -> int:  # the payload is a read-only mapping: not hashable itself
        return hash(self.event)


class Timers(NamedTuple):
    """What a state holds of time: the armed timers in arming order, the arming counter
    (0 until the first timer is armed) and the same timers by ID, in arming order (None:
    not built yet, see `timer_index`; never changed once built). Compare two by `armed`
    and `generation` (`same`)."""

    armed: tuple[ArmedTimer, ...]
    generation: int
    by_id: dict[str, ArmedTimer] | None = None

    def find(self, timer_id: str) -> ArmedTimer | None:
        """The armed timer with this id, or None."""
        return timer_index(self).get(timer_id)

    def same(self, other: "Timers") -> bool:
        """Whether both hold the same armed timers and arming counter."""
        return self.armed == other.armed and self.generation == other.generation


INDEXED = 16
"""The fewest armed timers whose `Timers` keeps its index (`by_id`): a dictionary per
state costs memory (a live task state stays under a kibibyte: tests/engine/test_state.py),
and for fewer timers building it when a step needs it is as cheap as copying it."""

_ID = itemgetter(0)  # an `ArmedTimer`'s id
_GENERATION = itemgetter(5)  # … and its generation


def timer_index(timers: Timers) -> dict[str, ArmedTimer]:
    """The armed timers by ID, in arming order. Kept with the timers, so that a step finds,
    cancels or arms one without a loop over all of them: with 1,000 armed, cancelling one
    by ID in a loop over the records cost 70 µs, a third of the event (`bench.armed_timers`);
    a copy of this dictionary costs 5 µs."""
    by_id = timers.by_id
    if by_id is None:
        armed = timers.armed
        return dict(zip(map(_ID, armed), armed, strict=True))
    return by_id


def _copied(timers: Timers) -> dict[str, ArmedTimer]:
    """A copy of the timers' index to change (`dict.copy` copies a dictionary with few
    deleted entries as one block; `dict(…)` copies it entry by entry, five times slower)."""
    by_id = timers.by_id
    return timer_index(timers) if by_id is None else by_id.copy()


NO_TIMERS = Timers((), 0, {})
"""The timers of every state that never armed one (shared)."""


@dataclass(frozen=True, slots=True)
class ArmTimers:
    """The engine's effect after a state's `entry` effects: arm its `after` timers
    (`roles` names each timer's expression in an evaluation error)."""

    state: str
    timers: tuple[TimerDecl, ...]
    roles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CancelTimers:
    """The engine's effect after a state's `exit` effects: cancel its `after` timers
    (`names`: their IDs, None: found by owner)."""

    state: str
    names: tuple[str, ...] | None = None


class TimerRun:
    """The timers of one macrostep while it runs (created on its first timer effect).

    `armed` starts as the input state's timers by ID and stays in arming order (a
    replacement removes the old timer and adds the new one, at the end), so the timers a
    macrostep armed are always its last ones. `log` records in order, with the
    index of the microstep, each timer armed or cancelled, and `sends` each
    undelayed send (None until the first): the cancelled and sent lists and the
    evidence are read from them.
    """

    __slots__ = ("armed", "dropped", "generation", "input", "log", "now_ms", "sends", "start")

    def __init__(self, timers: Timers, now_ms: int | None) -> None:
        self.armed: dict[str, ArmedTimer] = _copied(timers)
        self.input = timers.armed
        self.dropped = False  # whether a timer of the input was cancelled
        self.generation = self.start = timers.generation
        self.now_ms = now_ms
        self.log: list[tuple[int, str, ArmedTimer]] = []
        self.sends: list[tuple[int, SentEvent | OutgoingMessage]] | None = None

    def arm(self, at: int, timer: ArmedTimer) -> None:
        """Add a newly armed timer, last (its ID is armed nowhere else: `cancel` first)."""
        self.armed[timer.id] = timer
        self.log.append((at, "armed", timer))

    def cancel(self, at: int, timer_id: str) -> None:
        """Remove the timer armed under `timer_id`, if any."""
        timer = self.armed.pop(timer_id, None)
        if timer is not None:
            self.log.append((at, "cancelled", timer))
            if timer.generation <= self.start:
                self.dropped = True

    def cancel_owned(self, at: int, owner: str, names: tuple[str, ...] | None = None) -> None:
        """Remove the armed `after` timers of the state `owner`, in arming order; `names`:
        the IDs of its `after` timers, when the caller knows them (an owned timer has one
        of them: `state_timers` checks it), so that the others are not looked at."""
        armed = self.armed
        if names is None:
            found = [t for t in armed.values() if t.owner == owner]
        else:
            found = [t for n in names if (t := armed.get(n)) is not None and t.owner == owner]
            if len(found) > 1:
                found.sort(key=_GENERATION)
        for timer in found:
            del armed[timer.id]
            self.log.append((at, "cancelled", timer))
            if timer.generation <= self.start:
                self.dropped = True

    def pause(self, at: int, timer_ids: tuple[str, ...]) -> None:
        """Pause the running timers armed under `timer_ids` (see the module docstring):
        each is armed again under the next generation, without a due time, keeping the
        time it had left."""
        armed, now = self.armed, self.now_ms
        for timer_id in timer_ids:
            timer = armed.get(timer_id)
            if timer is None or timer.paused_ms is not None:
                continue
            due = timer.due_ms
            if now is not None and due is not None:  # within the range a state may hold
                left = clamped_due(due - now)
            else:
                left = timer.delay_ms if timer.delay_ms is not None else 0
            self._rearm(at, timer, None, left)

    def resume(self, at: int, timer_ids: tuple[str, ...]) -> None:
        """Resume the paused timers armed under `timer_ids`: each is armed again under the
        next generation, due at `now_ms` plus the time it had left (None without a clock)."""
        armed, now = self.armed, self.now_ms
        for timer_id in timer_ids:
            timer = armed.get(timer_id)
            if timer is None or (left := timer.paused_ms) is None:
                continue
            self._rearm(at, timer, None if now is None else clamped_due(now + left), None)

    def _rearm(self, at: int, timer: ArmedTimer, due: int | None, paused: int | None) -> None:
        """Replace `timer` by itself with this due time and pause, under the next
        generation (last in arming order, as any timer armed now)."""
        self.cancel(at, timer.id)
        self.generation = generation = self.generation + 1
        self.arm(at, timer._replace(due_ms=due, generation=generation, paused_ms=paused))

    def due(self, delay_ms: int | None) -> int | None:
        """The due time of a relative delay armed now (None without a clock reading)."""
        now = self.now_ms
        if delay_ms is None or now is None:
            return None
        return clamped_due(now + delay_ms)

    def timers(self) -> Timers:
        """The timers at the end of the macrostep (the new state's, which keeps `armed` as
        its index when there are `INDEXED` or more: the run changes nothing after it ends)."""
        armed, kept = self.armed, self.input
        added = len(armed) - len(kept)
        if self.dropped or added < 0:
            values = tuple(armed.values())
        elif added:  # the input's timers, all still armed, then those armed since
            tail = list(islice(reversed(armed.values()), added))
            tail.reverse()
            values = kept + tuple(tail)
        else:
            values = kept
        index = armed if len(armed) >= INDEXED else None
        return _new(Timers, (values, self.generation, index))

    def armed_now(self) -> tuple[ArmedTimer, ...]:
        """The timers the macrostep armed that are still armed, in arming order (read
        after the macrostep: `Result.timers_armed`)."""
        start = self.start
        found: list[ArmedTimer] = []
        for timer in reversed(self.armed.values()):
            if timer.generation <= start:
                break
            found.append(timer)
        return tuple(reversed(found))

    def cancelled(self) -> tuple[ArmedTimer, ...]:
        """The timers armed before the macrostep that it cancelled, in order."""
        start = self.start
        return tuple(t for _at, k, t in self.log if k == "cancelled" and t.generation <= start)

    def send(self, at: int, event: SentEvent | OutgoingMessage) -> None:
        """Record an undelayed send in microstep `at` (to this instance, or with `to:`)."""
        if self.sends is None:
            self.sends = []
        self.sends.append((at, event))

    def sent(self) -> tuple[SentEvent, ...]:
        """The undelayed sends to this instance, in order."""
        if self.sends is None:
            return ()
        return tuple(e for _at, e in self.sends if e.__class__ is SentEvent)

    def sends_in_order(self) -> tuple[SentEvent | OutgoingMessage, ...]:
        """Every undelayed send, to this instance or with `to:`, in effect order."""
        return () if self.sends is None else tuple(e for _at, e in self.sends)

    def messages(self) -> tuple[OutgoingMessage, ...]:
        """The undelayed sends with `to:` (to other instances), in order."""
        if self.sends is None:
            return ()
        return tuple(e for _at, e in self.sends if e.__class__ is OutgoingMessage)

    def microstep_logs(
        self, count: int
    ) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
        """For each of the first `count` microsteps, the ids of the timers it armed and
        cancelled and the events it sent, in order (one pass over the logs)."""
        out: list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = [_NO_LOGS] * count
        log = self.log
        if self.sends is None and log and log[0][0] == log[-1][0]:
            # every entry in one microstep (the log is in effect order), no sends: a state
            # left and entered again, a timer armed or cancelled; two passes instead of
            # the dictionary of lists below (this runs once per timed event's evidence)
            at = log[0][0]
            if at < count:
                ids = [t.id for _at, kind, t in log if kind == "armed"]
                others = [t.id for _at, kind, t in log if kind != "armed"]
                out[at] = (tuple(ids), tuple(others), ())
            return out
        found: dict[int, tuple[list[str], list[str], list[str]]] = {}
        for at, kind, timer in log:
            entry = found.get(at) or found.setdefault(at, ([], [], []))
            entry[0 if kind == "armed" else 1].append(timer.id)
        for at, event in self.sends or ():
            entry = found.get(at) or found.setdefault(at, ([], [], []))
            entry[2].append(event.event)
        for at, (armed, cancelled, sent) in found.items():
            if at < count:
                out[at] = (tuple(armed), tuple(cancelled), tuple(sent))
        return out


_NO_LOGS: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())

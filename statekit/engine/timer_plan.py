"""The timers of a compiled macrostep: the new state's built in one pass, the rest on read.

A compiled macrostep (`statekit.engine.compiled_macrostep`) runs no timer effect
but the engine's own: arming a state's `after` timers after its entry effects
and cancelling them after its exit effects (`statekit.engine.timers`). Which
states it enters and exits, in which microstep and in which order, is fixed by
its structure; what varies is the input state's timers and the values of the
`at:` and `delay:` expressions. So the compiled macrostep holds its timer
operations once, as a `TimerPlan`, and a step that runs it:

1. evaluates each `at:`/`delay:` expression where the general loop does (its
   arm effect appends the value to the step's pending record, see `resolve`);
2. builds the new state's `Timers` in one pass (`TimerPlan.timers`): the input's
   timers without those of the states the macrostep exits, then the timers it
   armed and did not cancel again, numbered by the arming counter, which moves
   on by one for every timer armed (cancelled later or not);
3. leaves what it armed and cancelled (`Result.timers_armed`, `timers_cancelled`)
   to `resolve`, which replays the operations on a `TimerRun` the first time one
   of them is read, exactly as `timer_effects.run_timer_effect` runs them in the
   general loop; the evidence's IDs of what each microstep armed and cancelled
   come from `TimerPlan.logs`, worked out with the plan, without the replay.

The input's timers owned by a state the macrostep exits are the ones that
exit cancels: a state's `after` timers are armed when it is entered and
cancelled when it is left, and an active state is entered again only after
it is left, so before a state's first exit the macrostep has armed none of its
timers. (A state may hold fewer than its declared timers: a delivery consumes
its timer and the state can stay active; then there is nothing to cancel.)

This exists for speed: a `TimerRun` with its lists and log, and one record per
timer effect, was most of what a lease timer (armed by one event, cancelled by
another) added to a step; the step now builds only the state's new timers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statekit.compiler.ir import TimerKind
from statekit.engine.timers import (
    TIMER_MS_MAX,
    TIMER_MS_MIN,
    ArmedTimer,
    TimerRun,
    Timers,
    clamped_due,
)
from statekit.engine.validation import EMPTY

AT = TimerKind.AT
_new = tuple.__new__

VALUES = 4
"""Where the evaluated `at:`/`delay:` values start in a pending record."""

TimerOp = tuple[int, str, str | None, TimerKind | None, int | None, int]
"""(microstep index, owner state's path, timer name or None for a cancel, kind,
literal delay, the value's index in the pending record or -1 for a literal delay)."""


def resolve(record: list[Any]) -> TimerRun:
    """The `TimerRun` of a step's pending record (replayed on the first call, kept after).

    The record is `[plan, input timers, now_ms, TimerRun or None, values…]`, a plain list
    and not an object for speed: the step builds one per timed macrostep, and a list
    display is the cheapest mutable record there is (the arm effects append their
    values to it, this function keeps the replayed `TimerRun` in it)."""
    run = record[3]
    if run is None:
        run = record[3] = record[0].replay(record)
    assert isinstance(run, TimerRun)
    return run


Survivor = tuple[str, TimerKind, int | None, int, int, str]
"""A timer the plan arms and does not cancel again: (name, kind, literal delay, value
index, generation offset from the input's counter, owner)."""
MakeTimers = Callable[[list[Any]], Timers]
"""The new state's timers from a step's pending record."""
Logs = list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
"""Per microstep, the IDs of the timers it armed and cancelled and the events it sent
(`TimerRun.microstep_logs`)."""
MakeLogs = Callable[[list[Any], int], Logs]
"""The evidence's timer logs of the first `count` microsteps from a step's pending record."""
_NO_LOGS: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())


@dataclass(frozen=True, slots=True)
class TimerPlan:
    """A compiled macrostep's timer operations in the order its effects run them
    (`ops`); `timers`, which builds the new state's timers from a step's pending
    record (the input's without those of the states exited, then the survivors); and
    `logs`, the evidence's timer logs from that record (see `_log_maker`)."""

    ops: tuple[TimerOp, ...]
    timers: MakeTimers
    logs: MakeLogs

    @classmethod
    def of(cls, ops: list[TimerOp]) -> TimerPlan:
        """The plan of these operations (in effect order)."""
        survivors: list[Survivor] = []
        offset = 0
        for i, (_at, owner, name, kind, fixed, slot) in enumerate(ops):
            if name is None:
                continue
            offset += 1
            later = ops[i + 1 :]
            if not any(n is None and o == owner for _a, o, n, _k, _f, _s in later):
                assert kind is not None
                survivors.append((name, kind, fixed, slot, offset, owner))
        cancels = frozenset(owner for _at, owner, name, *_ in ops if name is None)
        return cls(
            ops=tuple(ops), timers=_maker(cancels, tuple(survivors), offset), logs=_log_maker(ops)
        )

    def replay(self, record: list[Any]) -> TimerRun:
        """The operations run on a `TimerRun` from the input timers, as the general loop
        runs them: the arming and cancelling log, what was armed and cancelled."""
        now = record[2]
        run = TimerRun(record[1], now)
        for at, owner, name, kind, fixed, slot in self.ops:
            if name is None:
                run.cancel_owned(at, owner)
                continue
            assert kind is not None
            run.generation = generation = run.generation + 1
            timer = _timer(name, kind, fixed, slot, owner, generation, record, now)
            run.arm(at, timer)
        return run


def _log_maker(ops: list[TimerOp]) -> MakeLogs:
    """`TimerPlan.logs`: what `replay(record).microstep_logs(count)` gives, without the
    replay (the evidence of every timed macrostep reads it; the `TimerRun`, its
    `ArmedTimer`s and its log were most of what the evidence added to such a step).

    What varies with the record is only which of the input's timers a cancel removes;
    the rest is worked out here once. An `after` timer's ID is its name; a cancel
    removes the owner's armed timers in the run's order: the input's (those left: none
    after an earlier cancel of the same owner), then those this macrostep armed since
    its last cancel; a plan sends nothing."""
    steps: dict[int, tuple[list[str], list[tuple[str, bool, tuple[str, ...]]]]] = {}
    armed_since: dict[str, list[str]] = {}  # owner → what it armed since its last cancel
    cancelled: set[str] = set()
    for at, owner, name, *_ in ops:
        armed, cancels = steps.setdefault(at, ([], []))
        if name is not None:
            armed.append(name)
            armed_since.setdefault(owner, []).append(name)
        else:
            cancels.append((owner, owner not in cancelled, tuple(armed_since.pop(owner, ()))))
            cancelled.add(owner)
    template = tuple((at, tuple(armed), tuple(cancels)) for at, (armed, cancels) in steps.items())

    def logs(record: list[Any], count: int) -> Logs:
        out: Logs = [_NO_LOGS] * count
        inputs: tuple[ArmedTimer, ...] = record[1].armed
        for at, armed, cancels in template:
            if at < count:
                ids: list[str] = []
                for owner, first, names in cancels:
                    if first and inputs:
                        ids += [t.id for t in inputs if t.owner == owner]
                    ids += names
                out[at] = (armed, tuple(ids), ())
        return out

    return logs


def _maker(cancels: frozenset[str], survivors: tuple[Survivor, ...], arms: int) -> MakeTimers:
    """`TimerPlan.timers` for these cancels, survivors and count of timers armed: a
    closure specialised to the two shapes a lease timer takes (one state's timers
    cancelled; one `at:` timer armed with nothing cancelled) and to one literal delay
    armed and kept (whatever is cancelled), else the general one."""
    if not survivors and not arms:

        def cancelled(record: list[Any]) -> Timers:
            before: Timers = record[1]
            armed = before.armed
            if not armed:  # nothing to cancel (a delivery consumed it): no new timers
                return before
            if len(armed) == 1:  # the common case, without a comprehension
                return (
                    _new(Timers, ((), before.generation, None))
                    if armed[0].owner in cancels
                    else before
                )
            kept = tuple([t for t in armed if t.owner not in cancels])
            if len(kept) == len(armed):
                return before
            return _new(Timers, (kept, before.generation, None))

        return cancelled
    if not cancels and len(survivors) == 1 and survivors[0][1] is AT:
        name, _kind, _fixed, slot, _offset, owner = survivors[0]

        def armed_at(record: list[Any]) -> Timers:
            before: Timers = record[1]
            generation = before.generation + 1
            due = record[slot]
            timer = _new(ArmedTimer, (name, name, EMPTY, None, due, generation, owner, None, None))
            armed = before.armed
            if not armed:
                return _new(Timers, ((timer,), generation, None))
            return _new(Timers, ((*armed, timer), generation, None))

        return armed_at
    if len(survivors) == 1 and survivors[0][3] < 0:
        # one timer of a literal delay armed and kept (a state entered, or left and entered
        # again: the commonest timed macrostep), what `general` and `_timer` do, inline
        name, _kind, delay, _slot, offset, owner = survivors[0]

        def one_literal(record: list[Any]) -> Timers:
            before: Timers = record[1]
            armed = before.armed
            if armed and cancels:
                armed = tuple([t for t in armed if t.owner not in cancels])
            now = record[2]
            due = None if now is None or delay is None else now + delay
            if due is not None and not TIMER_MS_MIN <= due <= TIMER_MS_MAX:
                due = clamped_due(due)
            start = before.generation
            generation = start + offset
            fields = (name, name, EMPTY, delay, due, generation, owner, None, None)
            timer = _new(ArmedTimer, fields)
            if not armed:
                return _new(Timers, ((timer,), start + arms, None))
            return _new(Timers, ((*armed, timer), start + arms, None))

        return one_literal

    def general(record: list[Any]) -> Timers:
        before: Timers = record[1]
        armed = before.armed
        if armed and cancels:
            armed = tuple([t for t in armed if t.owner not in cancels])
        start = before.generation
        if survivors:
            now = record[2]
            made = tuple(
                [
                    _timer(name, kind, fixed, slot, owner, start + offset, record, now)
                    for name, kind, fixed, slot, offset, owner in survivors
                ]
            )
            armed = armed + made if armed else made
        return _new(Timers, (armed, start + arms, None))

    return general


def _timer(
    name: str,
    kind: TimerKind,
    fixed: int | None,
    slot: int,
    owner: str,
    generation: int,
    record: list[Any],
    now: int | None,
) -> ArmedTimer:
    """An `after` timer armed with its value (`timer_effects.run_timer_effect`'s rule)."""
    delay: int | None
    due: int | None
    if slot < 0:  # a literal delay
        delay = fixed
        due = None if now is None or delay is None else clamped_due(now + delay)
    elif kind is AT:
        delay, due = None, record[slot]
    else:
        delay = record[slot]
        due = None if now is None or delay is None else clamped_due(now + delay)
    return _new(ArmedTimer, (name, name, EMPTY, delay, due, generation, owner, None, None))

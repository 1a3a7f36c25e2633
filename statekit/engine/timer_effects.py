"""Running the timer effects of a microstep: the rules of `statekit.engine.timers`.

`send`, `cancel`, `pause` and `resume` (the chart's effects) and `ArmTimers`/`CancelTimers` (the
engine's, at the end of a state's entry and exit segments) record what they
do in the run's `TimerRun`, created on the first of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.ir import Cancel, Pause, Resume, Send, TimerKind
from statekit.engine.addressed_sends import addressed
from statekit.engine.delayed_messages import receiver
from statekit.engine.macrostep_run import MacrostepRun
from statekit.engine.timer_names import timers_named
from statekit.engine.timers import (
    ArmedTimer,
    ArmTimers,
    CancelTimers,
    SentEvent,
    TimerRun,
    clamped_due,
)
from statekit.engine.validation import EMPTY

AFTER, AT = TimerKind.AFTER, TimerKind.AT


def run_timer_effect(
    effect: object,
    payload: Mapping[str, Any],
    run: MacrostepRun,
    active: frozenset[int],
    defaults: Mapping[str, Mapping[str, Any]],
) -> None:
    """Run one timer effect (`send`, `cancel`, or the engine's arming and cancelling
    on entry and exit) on the run; `EvaluationError` when an expression fails."""
    timing = run.timing
    if timing is None:
        timing = run.timing = TimerRun(run.timers, run.now_ms)
    at = len(run.trace)
    if isinstance(effect, ArmTimers):  # inline: this runs on every entry of a timed state
        owner, now, generation = effect.state, timing.now_ms, timing.generation
        armed, log = timing.armed, timing.log
        delay: int | None
        due: int | None
        # The timers cannot be armed already: their state was not active (leaving it
        # cancels them), so nothing is replaced.
        for decl, role in zip(effect.timers, effect.roles, strict=True):
            kind = decl.kind
            if kind is AFTER:
                delay = decl.delay_ms
                due = None if now is None or delay is None else clamped_due(now + delay)
            else:
                assert decl.expression is not None
                value = run.values.timed(role, decl.expression, run.context, EMPTY, active)
                if kind is AT:
                    delay, due = None, value
                else:
                    delay = value
                    due = None if now is None or value is None else clamped_due(now + value)
            generation += 1
            name = decl.name
            timer = _new(ArmedTimer, (name, name, EMPTY, delay, due, generation, owner, None, None))
            armed[name] = timer
            log.append((at, "armed", timer))
        timing.generation = generation
    elif isinstance(effect, CancelTimers):
        timing.cancel_owned(at, effect.state, effect.names)
    elif isinstance(effect, Send):
        values = run.values
        body = values.queued(
            effect, defaults.get(effect.event, EMPTY), run.context, payload, active
        )
        role = f"send {effect.event}"
        if effect.at is not None:
            due = values.timed(f"{role} at", effect.at, run.context, payload, active)
            _arm_send(timing, at, effect, body, None, due)
        elif effect.delay is not None:
            delay = values.timed(f"{role} delay", effect.delay, run.context, payload, active)
            _arm_send(timing, at, effect, body, delay, timing.due(delay))
        elif effect.delay_ms:
            _arm_send(timing, at, effect, body, effect.delay_ms, timing.due(effect.delay_ms))
        elif effect.to is not None:  # to another instance, undelayed
            if effect.id is not None:
                timing.cancel(at, effect.id)
            timing.send(at, addressed(effect, body, values, run.context, payload, active))
        else:
            if effect.id is not None:
                timing.cancel(at, effect.id)
            timing.send(at, SentEvent(effect.event, MappingProxyType(body), effect.id))
    elif isinstance(effect, Cancel):
        timing.cancel(at, effect.id)
    elif isinstance(effect, Pause):
        timing.pause(at, timers_named(run.configuration.tables, effect.name))
    elif isinstance(effect, Resume):
        timing.resume(at, timers_named(run.configuration.tables, effect.name))
    else:  # pragma: no cover - the compiler produces no other effect
        raise TypeError(f"not an effect: {effect!r}")


def _arm_send(
    timing: TimerRun,
    at: int,
    effect: Send,
    body: dict[str, Any],
    delay: int | None,
    due: int | None,
) -> None:
    """Arm the timer of a delayed `send`, replacing one armed under its id (with `to:`,
    the timer names its receiver: `statekit.engine.delayed_messages`)."""
    timing.generation = generation = timing.generation + 1
    timer_id = effect.id if effect.id is not None else f"send({effect.event})#{generation}"
    if effect.id is not None:
        timing.cancel(at, timer_id)
    payload = MappingProxyType(body)
    to = None if effect.to is None else receiver(effect.to)
    fields = (timer_id, effect.event, payload, delay, due, generation, None, None, to)
    timer = _new(ArmedTimer, fields)
    timing.arm(at, timer)


_new = tuple.__new__

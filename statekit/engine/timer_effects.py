"""Running the timer effects of a microstep: the rules of `statekit.engine.timers`.

`send` and `cancel` (the chart's effects) and `ArmTimers`/`CancelTimers` (the
engine's, at the end of a state's entry and exit segments) record what they
do in the run's `TimerRun`, created on the first of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.ir import Cancel, Send, TimerDecl, TimerKind
from statekit.engine.macrostep_run import MacrostepRun
from statekit.engine.timers import ArmedTimer, ArmTimers, CancelTimers, SentEvent, TimerRun
from statekit.engine.validation import EMPTY


def timer_run(run: MacrostepRun) -> TimerRun:
    """The run's `TimerRun`, created on first use."""
    timing = run.timing
    if timing is None:
        timing = run.timing = TimerRun(run.timers, run.now_ms)
    return timing


def run_timer_effect(
    effect: object,
    payload: Mapping[str, Any],
    run: MacrostepRun,
    active: frozenset[int],
    defaults: Mapping[str, Mapping[str, Any]],
) -> None:
    """Run one timer effect (`send`, `cancel`, or the engine's arming and cancelling
    on entry and exit) on the run; `EvaluationError` when an expression fails."""
    timing = timer_run(run)
    at = len(run.trace)
    values = run.values
    if isinstance(effect, ArmTimers):
        for decl in effect.timers:
            _arm_after(timing, at, decl, effect.state, run, active)
    elif isinstance(effect, CancelTimers):
        for timer in [t for t in timing.armed if t.owner == effect.state]:
            timing.cancel(at, timer.id)
    elif isinstance(effect, Send):
        body = values.sent(effect, defaults.get(effect.event, EMPTY), run.context, payload, active)
        role = f"send {effect.event}"
        if effect.at is not None:
            due = values.timed(f"{role} at", effect.at, run.context, payload, active)
            _arm_send(timing, at, effect, body, None, due)
        elif effect.delay is not None:
            delay = values.timed(f"{role} delay", effect.delay, run.context, payload, active)
            _arm_send(timing, at, effect, body, delay, timing.due(delay))
        elif effect.delay_ms:
            _arm_send(timing, at, effect, body, effect.delay_ms, timing.due(effect.delay_ms))
        else:
            if effect.id is not None:
                timing.cancel(at, effect.id)
            timing.sent.append(SentEvent(effect.event, MappingProxyType(body)))
            timing.log.append((at, "sent", effect.event))
    elif isinstance(effect, Cancel):
        timing.cancel(at, effect.id)
    else:  # pragma: no cover - the compiler produces no other effect
        raise TypeError(f"not an effect: {effect!r}")


def _arm_after(
    timing: TimerRun,
    at: int,
    decl: TimerDecl,
    owner: str,
    run: MacrostepRun,
    active: frozenset[int],
) -> None:
    delay: int | None
    if decl.kind is TimerKind.AFTER:
        delay, due = decl.delay_ms, timing.due(decl.delay_ms)
    else:
        assert decl.expression is not None
        value = run.values.timed(f"timer {decl.name}", decl.expression, run.context, EMPTY, active)
        if decl.kind is TimerKind.AT:
            delay, due = None, value
        else:
            delay, due = value, timing.due(value)
    generation = timing.next_generation()
    timing.arm(at, ArmedTimer(decl.name, decl.name, EMPTY, delay, due, generation, owner))


def _arm_send(
    timing: TimerRun,
    at: int,
    effect: Send,
    body: dict[str, Any],
    delay: int | None,
    due: int | None,
) -> None:
    generation = timing.next_generation()
    timer_id = effect.id if effect.id is not None else f"send({effect.event})#{generation}"
    payload = MappingProxyType(body)
    timing.arm(at, ArmedTimer(timer_id, effect.event, payload, delay, due, generation, None))

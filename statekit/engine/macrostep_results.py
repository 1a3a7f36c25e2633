"""The results of a macrostep that fired: compiled, static or from the general loop.

`compiled_result` runs a compiled macrostep (`statekit.engine.compiled_macrostep`)
and makes its `Result`; `applied` makes the `Result` of any macrostep that fired
(APPLIED unless an invariant breaks) from its trace; `static_trace` is the trace of
a data-free macrostep of the memo. `step` (`statekit.engine.step`) decides which.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.engine.applied_results import applied_result, build_evidence, messages, timer_logs
from statekit.engine.compiled_evidence import one_microstep
from statekit.engine.compiled_macrostep import CompiledMacrostep
from statekit.engine.errors import EvaluationError
from statekit.engine.invariants import broken_invariant
from statekit.engine.result import (
    EVALUATION_ERROR,
    INVARIANT_VIOLATION,
    TOO_MANY_TIMERS,
    Result,
    Status,
)
from statekit.engine.state import State
from statekit.engine.tables import EMPTY, Configuration, MicrostepPlan, Tables
from statekit.engine.timer_plan import resolve
from statekit.engine.timers import MAX_ARMED_TIMERS, TimerRun, Timers
from statekit.engine.trace import AppliedMicrostep, AssignedValue, InternalEvent

APPLIED = Status.APPLIED
REJECTED = Status.REJECTED
_new = tuple.__new__


def compiled_result(
    tables: Tables,
    state: State,
    event: InternalEvent,
    event_id: str | None,
    compiled: CompiledMacrostep,
    now_ms: int | None,
) -> Result:
    """Rule 7 for a compiled macrostep: its effects run, the invariants checked;
    `EvaluationError` when an effect fails. A broken (or failing) invariant is left
    to `applied`, which checks again and words the rejection."""
    event_type, payload = event
    ctx: Any = dict(state._context) if compiled.assigns else state._context
    outbox: list[tuple[str, dict[str, Any]]] = []
    quick = compiled.evidence
    if quick is not None and not tables.chart.invariants:
        # one microstep without timers (a flat chart's): no trace, no timer record
        # (`Chart.send` on bench/xstate_peer.py's guarded chart: 3.2 -> 3.0 µs an event)
        done: list[AssignedValue] = []
        for effect in compiled.steps[0].effects:
            effect(ctx, payload, done, outbox, None)
        history = state._history
        if compiled.history_updates:
            history = {**history, **dict(compiled.history_updates)}
        emitted = messages(tables, state, event_type, payload, event_id, outbox) if outbox else ()
        changes_made = tuple(done)
        result = Result(
            APPLIED,
            None,
            State(compiled.target, ctx, history, state._timers),
            event_type,
            event_id,
            emitted,
        )
        result._evidence = one_microstep(quick, event_type, payload, changes_made, emitted)
        if tables.chart.invocations:  # its starts and cancels, read without the evidence
            result._moves = (compiled.steps[0].plan,)
        return result
    plan = compiled.timers
    # the pending timer record `statekit.engine.timer_plan.resolve` reads (a display: hot path)
    record = None if plan is None else [plan, state._timers, now_ms, None]
    steps = compiled.steps
    changes: list[AssignedValue] = []
    first = steps[0]
    for effect in first.effects:  # the event's microstep
        effect(ctx, payload, changes, outbox, record)
    trace = [
        _new(AppliedMicrostep, (event, first.plan, tuple(changes), 0, len(outbox), first.raised))
    ]
    if len(steps) > 1:  # the eventless and done microsteps that follow
        for micro in steps[1:]:
            changes = []
            start = len(outbox)
            for effect in micro.effects:
                effect(ctx, EMPTY, changes, outbox, record)
            micro_trace = (
                micro.event,
                micro.plan,
                tuple(changes),
                start,
                len(outbox),
                micro.raised,
            )
            trace.append(_new(AppliedMicrostep, micro_trace))
    history = state._history
    if compiled.history_updates:
        history = {**history, **dict(compiled.history_updates)}
    target = compiled.target
    if tables.chart.invariants:
        try:
            broken = broken_invariant(tables, target, ctx)
        except EvaluationError:
            broken = ""
        if broken is not None:
            timing = None if record is None else resolve(record)
            return applied(
                tables, state, event, event_id, target, ctx, history, outbox, trace, timing
            )
    emitted = messages(tables, state, event_type, payload, event_id, outbox) if outbox else ()
    if plan is None:  # (`quick`: one microstep, its changes the trace's first)
        result = Result(
            APPLIED,
            None,
            State(target, ctx, history, state._timers),
            event_type,
            event_id,
            emitted,
            (lambda: build_evidence(tables, trace, emitted))
            if quick is None
            else lambda: one_microstep(quick, event_type, payload, trace[0].changes, emitted),
        )
        if tables.chart.invocations:
            result._moves = trace
        return result
    assert record is not None
    timers = plan.timers(record)
    if len(timers.armed) > MAX_ARMED_TIMERS:
        refused = too_many_timers(state, event_type, event_id, timers)
        if refused is not None:
            return refused
    result = Result(
        APPLIED,
        None,
        State(target, ctx, history, timers),
        event_type,
        event_id,
        emitted,
        lambda: build_evidence(tables, trace, emitted, plan.logs(record, len(trace))),
    )
    result._timing = record
    if tables.chart.invocations:
        result._moves = trace
    return result


def too_many_timers(
    state: State, event_type: str, event_id: str | None, timers: Timers
) -> Result | None:
    """`TOO_MANY_TIMERS` when a macrostep from `state` would leave `timers` armed, over
    `MAX_ARMED_TIMERS` and more than it found; None: it may."""
    n = len(timers.armed)
    if n <= MAX_ARMED_TIMERS or n <= len(state._timers.armed):
        return None
    message = (
        f"{event_type} would leave {n} timers armed; the bound is {MAX_ARMED_TIMERS} "
        "(MAX_ARMED_TIMERS); nothing changed"
    )
    return Result(REJECTED, TOO_MANY_TIMERS, state, event_type, event_id, message=message)


def static_trace(event: InternalEvent, plans: tuple[MicrostepPlan, ...]) -> list[AppliedMicrostep]:
    """The trace of a static macrostep: the event's microstep, then eventless ones."""
    return [
        AppliedMicrostep(event if i == 0 else None, plan, (), 0, 0, ())
        for i, plan in enumerate(plans)
    ]


def applied(
    tables: Tables,
    state: State,
    event: InternalEvent,
    event_id: str | None,
    target: Configuration,
    context: Mapping[str, Any],
    history: Mapping[int, tuple[int, ...]],
    raw_emitted: list[tuple[str, dict[str, Any]]],
    trace: list[AppliedMicrostep] | tuple[MicrostepPlan, ...],
    timing: TimerRun | None = None,
) -> Result:
    """The result of a macrostep that fired: APPLIED unless an invariant breaks."""
    event_type, payload = event
    raw = static_trace(event, trace) if isinstance(trace, tuple) else trace
    if tables.chart.invariants:
        try:
            broken = broken_invariant(tables, target, context)
        except EvaluationError as exc:
            return Result(REJECTED, EVALUATION_ERROR, state, event_type, event_id, message=str(exc))
        if broken is not None:
            rolled_back = messages(tables, state, event_type, payload, event_id, raw_emitted)
            message = f"invariant '{broken}' would not hold after {event_type}; nothing changed"
            return Result(
                REJECTED,
                INVARIANT_VIOLATION,
                state,
                event_type,
                event_id,
                (),
                lambda: build_evidence(tables, raw, rolled_back, timer_logs(timing, len(raw))),
                broken,
                message,
            )
    if timing is None:  # no timer effect ran: the input's timers, within their bound
        after = State(target, context, history, state._timers)
    else:
        timers = timing.timers()
        if len(timers.armed) > MAX_ARMED_TIMERS:
            refused = too_many_timers(state, event_type, event_id, timers)
            if refused is not None:
                return refused
        after = State(target, context, history, timers)
    return applied_result(
        tables, state, event_type, payload, event_id, after, raw_emitted, raw, timing
    )

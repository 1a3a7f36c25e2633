"""The classified step: one external event in, exactly one `Result` out.

Order of the checks (the classification table; each rule is marked in `step`):

1. the state must come from this chart (same digest), else `ChartMismatchError`
   is raised: that is a programming error, not an event to classify;
2. `UNKNOWN_EVENT`: the event type is not declared;
3. `INVALID_PAYLOAD`: the payload does not match the event's declaration;
4. a final chart selects nothing: an `already` entry on an active final state
   gives `ALREADY_APPLIED`, a `reject` entry on one its reason, anything else
   is `TERMINAL_STATE` (entries on ancestors do not count);
5. selection and the macrostep; an expression that raises is
   `EVALUATION_ERROR`, a macrostep over the microstep bound is `LIVELOCK` (an event
   from an invoked child whose invocation has a `finalize:` runs it first, as the
   macrostep's first microstep: `statekit.engine.finalize_step`);
6. nothing selected: `ALREADY_APPLIED` when any active state lists the event
   in `already` (even if a guard failed); else the first failing guard's
   reason, in selection order (atomic states in document order; for each,
   its own candidates then its ancestors'; a transition's named guards in
   order, then its `if`), so with failing guards in several regions the
   region first in the document gives the reason; else the most specific
   `reject` entry (the deepest active state with a matching entry; in one
   state, or between states of equal depth, the exact event name before
   `"*"`, then document order); else `UNDEFINED_TRANSITION`;
7. something fired: every invariant must hold in the resulting state, else
   `INVARIANT_VIOLATION` (`Result.invariant` names the first broken one in
   declaration order; the evidence shows the rolled-back microsteps).

Every rejection returns the input state object itself, with nothing emitted,
except the rejection of a timer's delivery (`fire`): it consumes the timer, as
`consume` does for a delivery its caller decided without the chart.

Time: `fire` delivers an armed timer (`statekit.engine.timers`): a timer that
is not armed (or whose generation differs) is `STALE_TIMER`, a paused one
`PAUSED_TIMER` (both change nothing); otherwise the
timer is removed from the state and its event is classified by the rules
above from that state, so a delivery that selects nothing (or is rejected
for any other reason) returns the state without the timer. Sending the name
of an `after` timer's event is `fire` of that timer. `now_ms`, the clock's
reading, only turns relative delays armed by the step into due times.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.event_meta import EXTERNAL, EventPayload, fired_send, with_meta
from statekit.engine.algorithm import macrostep
from statekit.engine.compiled_choice import NOT_COMPILED, Choice, compiled_choice
from statekit.engine.compiled_event import compiled_event
from statekit.engine.compiled_evidence import static_evidence
from statekit.engine.compiled_macrostep import CompiledMacrostep, compiled_macrostep
from statekit.engine.delayed_messages import delivered
from statekit.engine.errors import EvaluationError, LivelockError
from statekit.engine.finalize_step import finalized_step, finalizing
from statekit.engine.macrostep_results import applied as _applied
from statekit.engine.macrostep_results import compiled_result as _compiled
from statekit.engine.memo import memoised_macrostep
from statekit.engine.result import (
    EVALUATION_ERROR,
    INVALID_PAYLOAD,
    LIVELOCK,
    PAUSED_TIMER,
    STALE_TIMER,
    UNKNOWN_EVENT,
    Result,
    Status,
)
from statekit.engine.selection import select_transitions
from statekit.engine.state import State
from statekit.engine.tables import (
    EMPTY,
    DependsOnData,
    NoCandidates,
    StaticLivelock,
    StaticMacrostep,
    Tables,
)
from statekit.engine.timers import (
    INDEXED,
    ArmedTimer,
    Timers,
    timer_index,
)
from statekit.engine.unselected import unselected
from statekit.engine.validation import PayloadError

APPLIED = Status.APPLIED
_NO_MEMO = DependsOnData(conflicts=())
"""What the step takes the memo's answer to be when the memo is off (`memo=False`)."""
_new = tuple.__new__
REJECTED = Status.REJECTED


class ChartMismatchError(ValueError):
    """A state was sent to a chart other than the one it was made with (by digest)."""


def adopt(tables: Tables, state: State) -> State:
    """`state` expressed in `tables` (another `Chart` object of the same digest), or
    `ChartMismatchError`."""
    if not isinstance(state, State):
        raise TypeError(f"expected a statekit State, got {type(state).__name__}")
    config = state._config
    if config.tables is tables:
        return state
    if config.tables.digest != tables.digest:
        raise ChartMismatchError(
            f"the state belongs to chart {config.tables.chart.name!r} ({config.tables.digest}), "
            f"not to {tables.chart.name!r} ({tables.digest})"
        )
    return State(tables.configuration(config.ids), state._context, state._history, state._timers)


def step(
    tables: Tables,
    state: State,
    event_type: str,
    payload: Mapping[str, Any] | None = None,
    event_id: str | None = None,
    *,
    memoised: bool = True,
    now_ms: int | None = None,
    timer: ArmedTimer | None = None,
    memo: bool = True,
) -> Result:
    """Classify and apply one external event, rule by rule (see the module docstring).

    The engine has three paths to the same result. The *cached* path: the memo of
    data-free macrosteps (`statekit.engine.memo`) answers an event no data can change
    with a result looked up. The *general* path, what every other event takes (and
    every event with `memo=False`, `Chart(memo=False)`): the selection and the
    macrostep compiled per (configuration, event) (`statekit.engine.compiled_event`,
    `compiled_choice`, `compiled_macrostep`), run on this event's payload and context.
    The *reference* path, `memoised=False`: SCXML's macrostep loop and nothing
    compiled, the oracle the differential tests compare the other two with. `timer`
    is the timer `fire` is delivering (already removed from `state`).
    """
    try:  # 1. the state must come from this chart
        config = state._config
    except AttributeError:
        raise TypeError(f"expected a statekit State, got {type(state).__name__}") from None
    if config.tables is not tables:
        state = adopt(tables, state)
        config = state._config
    try:  # 2. the event must be declared
        validator = tables.validators.get(event_type)
    except TypeError:  # an unhashable event type
        validator = None
    if validator is None:
        if timer is None:  # not a declared event: the name of a timer's event, or unknown
            return _undeclared(tables, state, event_type, payload, event_id, now_ms)
        clean: Mapping[str, Any] = EMPTY  # an `after` timer's event: no payload
    elif payload is None and validator.bare:  # 3. the payload must match its declaration
        clean = EMPTY
    else:
        try:
            clean = validator.check(payload)
        except PayloadError as exc:
            return Result(REJECTED, INVALID_PAYLOAD, state, event_type, event_id, message=str(exc))
    if config.final:  # 4. a final chart selects nothing
        return unselected(tables, state, event_type, event_id, None)
    if payload.__class__ is EventPayload and tables.chart.invocations:  # from a child?
        finalize = finalizing(tables, config, payload)
        if finalize is not None:  # its invocation's finalize first (statekit.engine.finalize_step)
            told: Any = payload  # (an EventPayload: `finalizing` checked its class)
            return finalized_step(
                tables, state, event_type, clean, told, event_id, finalize, now_ms
            )
    event = (event_type, clean)
    if tables.reads_event_meta:  # `_event` is read: the payload carries what the event is
        sent = payload if timer is None else fired_send(timer.id, timer.owner)
        event = with_meta(event, EXTERNAL, sent)
    if memoised:  # 5. selection and the macrostep, from the memo when data cannot matter
        # (the memo's per-configuration cache read inline: this is the hot path)
        if memo:
            known = config.cache.memo.get(event_type) or memoised_macrostep(
                tables, config, event_type
            )
        else:
            known = _NO_MEMO
        if known.__class__ is DependsOnData:  # the general path's case, tested first
            # the general path fused per (configuration, event), when it has that shape
            fused = config.cache.fused.get(event_type)
            if fused is None:
                fused = compiled_event(tables, config, event_type)
            if fused is not False:
                result = fused(state, clean, event_id)  # type: ignore[operator]
                if result is not None:
                    return result
        elif isinstance(known, StaticMacrostep):
            context, history, plans = state._context, state._history, known.plans
            if not tables.chart.invariants:  # nothing to check, nothing to run
                result = Result(
                    APPLIED,
                    None,
                    State(known.target, context, history, state._timers),
                    event_type,
                    event_id,
                    (),
                    lambda: static_evidence(tables, event, plans),
                )
                if tables.chart.invocations:  # its starts and cancels, without the evidence
                    result._moves = plans
                return result
            return _applied(
                tables, state, event, event_id, known.target, context, history, [], plans
            )
        elif isinstance(known, StaticLivelock):
            return Result(REJECTED, LIVELOCK, state, event_type, event_id, message=known.message)
        elif isinstance(known, NoCandidates):
            return unselected(tables, state, event_type, event_id, None)
    context, history = state._context, state._history
    try:
        selected = None
        if not tables.raises_evaluation_errors:  # (else a failing guard raises an event)
            choose: Choice | bool = NOT_COMPILED
            if memoised:  # a selection compiled per event (statekit.engine.compiled_choice)
                choose = config.cache.choices.get(event_type) or compiled_choice(
                    tables, config, event_type
                )
            if isinstance(choose, bool):
                selected = select_transitions(tables, config, event, context, history)
            else:
                selected = choose(context, event[1], config.ids)
            enabled = selected[0]
            if not enabled:  # 6. nothing selected
                return unselected(tables, state, event_type, event_id, selected[1])
            if memoised:  # a macrostep of static structure (statekit.engine.compiled_macrostep)
                found = config.cache.single.get(enabled) or compiled_macrostep(
                    tables, config, enabled
                )
                if found.__class__ is CompiledMacrostep:
                    return _compiled(tables, state, event, event_id, found, now_ms)
        run = macrostep(
            tables,
            config,
            history,
            context,
            event,
            timers=state._timers,
            now_ms=now_ms,
            selected=selected,
        )
    except EvaluationError as exc:
        return Result(REJECTED, EVALUATION_ERROR, state, event_type, event_id, message=str(exc))
    except LivelockError as exc:
        return Result(REJECTED, LIVELOCK, state, event_type, event_id, message=str(exc))
    if not run.fired:  # 6. nothing selected
        return unselected(tables, state, event_type, event_id, run.failed_guard)
    return _applied(  # 7. something fired: the invariants must hold
        tables,
        state,
        event,
        event_id,
        run.configuration,
        run.context,
        run.history,
        run.emitted,
        run.trace,
        run.timing,
    )


def _undeclared(
    tables: Tables,
    state: State,
    event_type: str,
    payload: Mapping[str, Any] | None,
    event_id: str | None,
    now_ms: int | None,
) -> Result:
    """Rule 2 for an event that is not declared: the name of an `after` timer's event is
    that timer's delivery (`fire`); anything else is `UNKNOWN_EVENT`."""
    chart = tables.chart
    if chart.timers and isinstance(event_type, str) and chart.timer(event_type) is not None:
        if payload:
            message = f"timer event {event_type!r} carries no payload"
            return Result(REJECTED, INVALID_PAYLOAD, state, event_type, event_id, message=message)
        return fire(tables, state, event_type, now_ms=now_ms, event_id=event_id)
    message = f"event {event_type!r} is not declared in chart {chart.name!r} v{chart.version}"
    return Result(REJECTED, UNKNOWN_EVENT, state, str(event_type), event_id, message=message)


def fire(
    tables: Tables,
    state: State,
    timer_id: str,
    *,
    generation: int | None = None,
    now_ms: int | None = None,
    event_id: str | None = None,
    memo: bool = True,
) -> Result:
    """Deliver the armed timer `timer_id` (see the module docstring): `STALE_TIMER` when it
    is not armed or its generation is not `generation` (when given); else the step of its
    event from the state without it, `Result.timer` naming it (`memo` as for `step`)."""
    if not isinstance(state, State):
        raise TypeError(f"expected a statekit State, got {type(state).__name__}")
    state = adopt(tables, state)
    timers = state._timers
    armed = timers.find(timer_id) if isinstance(timer_id, str) else None
    if armed is None or (generation is not None and armed.generation != generation):
        if armed is None:
            message = f"timer {timer_id!r} is not armed"
        else:
            message = f"timer {timer_id!r} is armed with generation {armed.generation}, "
            message += f"not {generation}"
        event = armed.event if armed is not None else str(timer_id)
        return Result(REJECTED, STALE_TIMER, state, event, event_id, message=message)
    if armed.paused_ms is not None:
        message = f"timer {timer_id!r} is paused ({armed.paused_ms} ms left): resume it first"
        return Result(REJECTED, PAUSED_TIMER, state, armed.event, event_id, message=message)
    without = _without(state, armed)
    if armed.to is not None:  # a delayed send to the parent or a child: its message
        return delivered(without, armed, event_id, now_ms)
    payload = armed.payload if armed.owner is None else None
    result = step(
        tables, without, armed.event, payload, event_id, now_ms=now_ms, timer=armed, memo=memo
    )
    result._timer = armed
    return result


def consume(
    tables: Tables,
    state: State,
    timer_id: str,
    *,
    generation: int,
    reason: str,
    message: str,
    event_id: str | None = None,
) -> Result:
    """Consume the armed timer `timer_id` without classifying its event (the caller decided
    the delivery, see `Chart.consume`): REJECTED with `reason` and `message`, the state
    without the timer, `Result.timer` naming it; `STALE_TIMER` as `fire` when it is not
    armed with `generation`."""
    if not isinstance(state, State):
        raise TypeError(f"expected a statekit State, got {type(state).__name__}")
    state = adopt(tables, state)
    armed = state._timers.find(timer_id) if isinstance(timer_id, str) else None
    if armed is None or armed.generation != generation or armed.paused_ms is not None:
        return fire(tables, state, timer_id, generation=generation, event_id=event_id)
    result = Result(
        REJECTED, reason, _without(state, armed), armed.event, event_id, message=message
    )
    result._timer = armed
    return result


def _without(state: State, armed: ArmedTimer) -> State:
    """`state` without the armed timer `armed` (the arming counter unchanged)."""
    timers = state._timers
    by_id = timer_index(timers).copy()  # a copy, not a loop over the timers (`Timers.by_id`)
    del by_id[armed.id]
    rest = Timers(
        tuple(by_id.values()), timers.generation, by_id if len(by_id) >= INDEXED else None
    )
    return State(state._config, state._context, state._history, rest)

"""The step of an event from an invoked child whose invocation has a `finalize:`.

SCXML's `<finalize>` (https://www.w3.org/TR/scxml/#finalize): when an event from the
child of an invocation arrives while the invoking state is active, the invocation's
finalize runs first, then the event's transitions are selected with the context it
left. Here the finalize is the first microstep of the event's macrostep: a plan that
fires no transition, exits and enters nothing, and runs the finalize's `assign`
effects, so the evidence shows what it assigned (`Microstep.changes`) before the
microsteps of the transitions. The event is known to come from the child by
`_event.invokeid`, which the family step gives it (`statekit.engine.family`); an event
from outside, a timer or another child runs no finalize.

The classification is the event's: when it selects no transition it is REJECTED (or
ALREADY_APPLIED) as any event, and the finalize's assigns go with the rest of the
step (nothing changed), so a rejection still means that nothing changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.event_meta import EXTERNAL, EventPayload, with_meta
from statekit.compiler.invocations import Invocation
from statekit.engine.algorithm import macrostep
from statekit.engine.errors import EvaluationError, LivelockError
from statekit.engine.macrostep_results import applied
from statekit.engine.result import EVALUATION_ERROR, LIVELOCK, Result, Status
from statekit.engine.state import State
from statekit.engine.tables import Configuration, EffectSegment, MicrostepPlan, Tables
from statekit.engine.unselected import unselected

_INVOKEID = 3
"""The position of `_event.invokeid` in `EventPayload.meta` (`event_meta.META_INDEX`)."""


def finalizing(tables: Tables, config: Configuration, payload: object) -> Invocation | None:
    """The invocation whose finalize an event with `payload` runs in `config`: the one its
    `_event.invokeid` names, when it has a finalize and its state is active."""
    if payload.__class__ is not EventPayload:
        return None
    assert isinstance(payload, EventPayload)
    meta = payload.meta
    invoke_id = None if meta is None else meta[_INVOKEID]
    if invoke_id is None:
        return None
    invocation = tables.chart.invocation(invoke_id)
    if invocation is None or not invocation.finalize or invocation.state not in config.ids:
        return None
    return invocation


def finalize_plan(config: Configuration, invocation: Invocation) -> MicrostepPlan:
    """The finalize as a microstep: no transition, nothing exited or entered, its effects
    seeing the configuration as it is."""
    segment = EffectSegment(effects=invocation.finalize, active=config.ids, done=())
    return MicrostepPlan(
        transitions=(),
        exit_order=(),
        entry_order=(),
        target=config,
        history_updates=(),
        segments=(segment,),
        exited=(),
        entered=(),
    )


def finalized_step(
    tables: Tables,
    state: State,
    event_type: str,
    clean: Mapping[str, Any],
    sent: EventPayload,
    event_id: str | None,
    invocation: Invocation,
    now_ms: int | None,
) -> Result:
    """Classify and apply the event (`clean`: its validated payload, `sent`: as the family
    gave it) with `invocation`'s finalize run first (see the module docstring)."""
    config = state._config
    event = (event_type, clean)
    if tables.reads_event_meta:
        event = with_meta(event, EXTERNAL, sent)
    # the finalize reads a field the event lacks as null
    read: dict[str, Any] = dict.fromkeys(invocation.finalize_fields)
    read.update(event[1])
    meta = event[1].meta if isinstance(event[1], EventPayload) else None
    finalize = (finalize_plan(config, invocation), (event_type, EventPayload(read, meta)))
    try:
        run = macrostep(
            tables,
            config,
            state._history,
            state._context,
            event,
            timers=state._timers,
            now_ms=now_ms,
            finalize=finalize,
        )
    except EvaluationError as exc:
        return Result(
            Status.REJECTED, EVALUATION_ERROR, state, event_type, event_id, message=str(exc)
        )
    except LivelockError as exc:
        return Result(Status.REJECTED, LIVELOCK, state, event_type, event_id, message=str(exc))
    if not run.fired:
        return unselected(tables, state, event_type, event_id, run.failed_guard)
    return applied(
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

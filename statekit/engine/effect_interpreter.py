"""Running a microstep's effects (`assign`, `emit`, `raise`, `send`, `cancel`, `if`) in
the run's value domain.

Nothing external runs: `assign` updates the macrostep's context (copied on
the first write, so the input state's context is never touched), `emit`
appends an outbox message, `raise` queues an internal event, entering a
final state queues its `done.state.*` events, and the timer effects (`send`,
`cancel`, and the arming and cancelling of a state's `after` timers on entry
and exit) go to `statekit.engine.timer_effects`, which records them in the run.
Every effect sees the context as updated by the effects before it, including
the earlier fields of the same `assign`. An `if` runs the effects of its first branch
whose condition holds (`guard_passes`: a failing condition is an `EvaluationError`, as a
failing guard is); under the analysis, its `oracle` decides each condition. What an
expression yields is the run's `ValueDomain`'s business (`statekit.engine.value_domain`):
one algorithm, concrete or abstract values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.event_meta import with_locals
from statekit.compiler.ir import Assign, Conditional, Effect, Emit, Foreach, Raise
from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION, REASON_FIELD
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value, guard_passes
from statekit.engine.macrostep_run import MacrostepRun
from statekit.engine.tables import EMPTY, EffectSegment, TimedEffect
from statekit.engine.timer_effects import run_timer_effect
from statekit.engine.trace import AssignedValue
from statekit.engine.value_domain import AbstractValue

_NO_DEFAULTS: Mapping[str, Any] = EMPTY
_new = tuple.__new__
"""Builds a named tuple without its Python-level `__new__` (once per assignment)."""


def run_effects(
    segments: tuple[EffectSegment, ...],
    payload: Mapping[str, Any],
    run: MacrostepRun,
    defaults: Mapping[str, Mapping[str, Any]],
) -> tuple[tuple[AssignedValue, ...], tuple[str, ...]]:
    """Run a microstep's effects; return its context changes and raised event names."""
    changes: list[AssignedValue] = []
    raised: list[str] = []
    errors = run.errors
    for segment in segments:
        if errors is None:
            _run_list(segment.effects, segment.active, payload, run, defaults, changes, raised)
        else:  # on_evaluation_error: raise: a failure stops this block only (SCXML)
            try:
                _run_list(segment.effects, segment.active, payload, run, defaults, changes, raised)
            except EvaluationError as exc:
                errors.append(str(exc))
                raised.extend(queue_error_events(run))
        for name in segment.done:
            body = _done_payload(segment, payload, run, raised) if segment.output else EMPTY
            run.queue.append((name, body))
            raised.append(name)
    if raised:
        run.raised.extend(raised)
    return (tuple(changes) if changes else (), tuple(raised) if raised else ())


def _done_payload(
    segment: EffectSegment, payload: Mapping[str, Any], run: MacrostepRun, raised: list[str]
) -> Mapping[str, Any]:
    """The payload of a final state's `done.state.<parent>`; in a chart with
    `on_evaluation_error: raise`, an output that fails raises `error.execution` first
    and the done event carries nothing (SCXML's `<donedata>`)."""
    try:
        return run.values.done_payload(segment, run.context, payload, segment.active)
    except EvaluationError as exc:
        if run.errors is None:
            raise
        run.errors.append(str(exc))
        raised.extend(queue_error_events(run))
        return EMPTY


def queue_error_events(run: MacrostepRun) -> list[str]:
    """Queue an `error.execution` event (payload `{reason}`) for each evaluation error the
    run noted and has not queued yet; the names queued."""
    errors = run.errors
    assert errors is not None
    queued = [ERROR_EXECUTION] * len(errors)
    for message in errors:
        run.queue.append((ERROR_EXECUTION, {REASON_FIELD: message}))
    errors.clear()
    return queued


def _run_list(
    effects: tuple[TimedEffect, ...],
    active: frozenset[int],
    payload: Mapping[str, Any],
    run: MacrostepRun,
    defaults: Mapping[str, Mapping[str, Any]],
    changes: list[AssignedValue],
    raised: list[str],
) -> None:
    """Run effects in order (a segment's, or the chosen branch of an `if`)."""
    values = run.values
    for effect in effects:
        if isinstance(effect, Assign):
            ctx = run.context
            if not run.context_owned:  # copy on the first write
                ctx = run.context = dict(ctx)
                run.context_owned = True
            assert isinstance(ctx, dict)
            for field, expr in effect.assignments:
                value = values.assigned(field, expr, ctx, payload, active)
                changes.append(_new(AssignedValue, (field, ctx[field], value)))
                ctx[field] = value
        elif isinstance(effect, Emit):
            body = values.emitted(effect, run.context, payload, active)
            if body is not None:
                run.emitted.append((effect.type, body))
        elif isinstance(effect, Raise):
            event_defaults = defaults.get(effect.event, _NO_DEFAULTS)
            body = values.queued(effect, event_defaults, run.context, payload, active)
            run.queue.append((effect.event, body))
            raised.append(effect.event)
        elif isinstance(effect, Conditional):
            branch = _chosen_branch(effect, run, payload, active)
            _run_list(branch, active, payload, run, defaults, changes, raised)
        elif isinstance(effect, Foreach):
            for local_values in _iterations(effect, run, payload, active):
                scoped = with_locals(payload, local_values)
                _run_list(effect.effects, active, scoped, run, defaults, changes, raised)
        else:  # time: checked last, so the effects above pay nothing for it
            run_timer_effect(effect, payload, run, active, defaults)


def _iterations(
    effect: Foreach, run: MacrostepRun, payload: Mapping[str, Any], active: frozenset[int]
) -> list[dict[str, Any]]:
    """The locals of each run of a `foreach` body: one per element of its list (evaluated
    once, before the first), or, under the analysis, none or one run with unknown values
    as its oracle decides whether the list has an element (see `statekit.analysis`)."""
    oracle = run.oracle
    if oracle is not None:
        if not oracle(effect.nonempty, None, run.context, payload, active):
            return []
        unknown: dict[str, Any] = {effect.item: AbstractValue()}
        if effect.index is not None:
            unknown[effect.index] = AbstractValue()
        return [unknown]
    values = computed_value("foreach 'array'", effect.array, run.context, payload, active)
    out = []
    for position, element in enumerate(list(values)):
        local_values = {effect.item: element}
        if effect.index is not None:
            local_values[effect.index] = position
        out.append(local_values)
    return out


def _chosen_branch(
    effect: Conditional, run: MacrostepRun, payload: Mapping[str, Any], active: frozenset[int]
) -> tuple[Effect, ...]:
    """The effects of the first branch whose condition holds (else `otherwise`): each
    condition evaluated on the context as the effects before it left it, or decided by the
    analysis's oracle (which treats an unknown condition as a choice: both outcomes)."""
    oracle = run.oracle
    context = run.context
    for branch in effect.branches:
        if oracle is None:
            holds = guard_passes(branch.check, context, payload, active)
        else:
            holds = oracle(branch.check, None, context, payload, active)
        if holds:
            return branch.effects
    return effect.otherwise

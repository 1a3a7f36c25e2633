"""The W3C SCXML interpretation algorithm over the compiled chart.

https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation

The procedures keep the spec's names: `microstep` and `macrostep` (the spec's
mainEventLoop body for one external event) here, over `select_transitions` and
`select_eventless_transitions` (`statekit.engine.selection`) and
`remove_conflicting_transitions`, `compute_exit_set` and `compute_entry_set`
(`statekit.engine.transition_sets`). Our root
plays `<scxml>`: it is never exited or entered, and once it is in a final
state (a top-level final state; for a parallel root, every region final) the
macrostep stops, like the spec's `running = false`.

Deviations from the spec, all deliberate: an expression that raises is not
`error.execution` but aborts the macrostep with `EvaluationError` (the step
is rejected, nothing changes); a macrostep longer than
`Tables.max_microsteps` aborts with `LivelockError`; event names match
exactly (no prefix matching; `done.state.<path>` uses dotted paths).

`_event` is bound as the spec binds it: to the external event, then to each internal
event once taken up (`MacrostepRun.bound`, what eventless microsteps see), and to
none in the initial macrostep until one is; a chart that reads it gets each payload as
an `EventPayload` carrying what the event is (`statekit.compiler.expressions.event_meta`).

`macrostep` is a pure function of (tables, configuration, history, context,
event): it never mutates its arguments and keeps no state between calls
except the caches in `tables` and each `ConfigurationCache`, which only
remember results. `history` maps history-state ids to recorded state ids.
`event=None` runs only the eventless transitions and internal events (to
completion). A raising guard is an `EvaluationError` (see
`statekit.engine.selection` for which guards are evaluated).

Callers: the classified step (`statekit.engine.step`), the memo of
data-free macrosteps (`statekit.engine.memo`) and abstract execution
(`statekit.engine.abstract`, the static analysis's only door in), which
passes a `GuardOracle` to decide guards, the `ABSTRACT` value domain and a
list that collects the conflict resolutions met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.event_meta import EXTERNAL, INTERNAL, with_meta
from statekit.engine.effect_interpreter import queue_error_events, run_effects
from statekit.engine.errors import LivelockError
from statekit.engine.macrostep_run import FailedGuard, MacrostepRun
from statekit.engine.plans import build_plan
from statekit.engine.selection import (
    GuardOracle,
    eventless_entry,
    select_eventless_transitions,
    select_transitions,
)
from statekit.engine.tables import Configuration, MicrostepPlan, Tables
from statekit.engine.timers import NO_TIMERS, Timers
from statekit.engine.trace import AppliedMicrostep, AssignedValue, InternalEvent
from statekit.engine.transition_sets import (
    ConflictSink,
    History,
    compute_entry_set,
    compute_exit_set,
)
from statekit.engine.value_domain import CONCRETE, ValueDomain

_new = tuple.__new__


def plan_of(
    tables: Tables, config: Configuration, transitions: tuple[int, ...], history: History
) -> MicrostepPlan:
    """The plan of the microstep that fires `transitions` in `config` (cached unless a
    transition targets a history state)."""
    cacheable = tables.history_targeting.isdisjoint(transitions)
    plan = config.cache.plans.get(transitions) if cacheable else None
    if plan is None:
        plan = build_plan(
            tables,
            config,
            transitions,
            compute_exit_set(tables, config, transitions, history),
            compute_entry_set(tables, transitions, history),
        )
        if cacheable:
            config.cache.plans[transitions] = plan
    return plan


def microstep(
    tables: Tables,
    config: Configuration,
    transitions: tuple[int, ...],
    event: InternalEvent | None,
    run: MacrostepRun,
) -> Configuration:
    """SCXML microstep: exit states (recording history), run transition effects, enter
    states; returns the new configuration and records the microstep in `run.trace`."""
    plan = config.cache.plans.get(transitions)  # plans that read history are never cached
    if plan is None:
        plan = plan_of(tables, config, transitions, run.history)
    return apply_plan(tables, plan, event, run)


def apply_plan(
    tables: Tables, plan: MicrostepPlan, event: InternalEvent | None, run: MacrostepRun
) -> Configuration:
    """Apply a microstep's plan to the run: record history, run the effects in the run's
    value domain, append the `AppliedMicrostep`; returns the new configuration."""
    if plan.history_updates:
        if not run.history_owned:
            run.history = dict(run.history)
            run.history_owned = True
        history = run.history
        assert isinstance(history, dict)
        history.update(plan.history_updates)
    start = len(run.emitted)
    changes: tuple[AssignedValue, ...] = ()
    raised: tuple[str, ...] = ()
    if plan.segments:  # an eventless microstep's effects see the bound event's meta
        payload = event[1] if event is not None else run.bound
        changes, raised = run_effects(plan.segments, payload, run, tables.payload_defaults)
    applied = (event, plan, changes, start, len(run.emitted), raised)
    run.trace.append(_new(AppliedMicrostep, applied))  # without the Python-level __new__
    return plan.target


def run_to_completion(tables: Tables, run: MacrostepRun, oracle: GuardOracle | None) -> None:
    """The inner loop of mainEventLoop: eventless transitions first, then internal events."""
    config = run.configuration
    queue = run.queue
    limit = tables.max_microsteps
    found = run.conflicts
    errors = run.errors
    while not config.final:
        event: InternalEvent | None = None
        enabled = select_eventless_transitions(
            tables, config, run.context, run.history, oracle, found, errors, run.bound
        )
        if errors:
            queue_error_events(run)
        if not enabled:
            if not queue:
                break
            event = queue.pop(0)
            if tables.reads_event_meta:  # `_event` is bound to it from here on
                event = with_meta(event, INTERNAL)
                run.bound = event[1]
            enabled = select_transitions(
                tables, config, event, run.context, run.history, oracle, found, errors
            )[0]
            if errors:
                queue_error_events(run)
            if not enabled:
                continue
        if len(run.trace) >= limit:
            raise LivelockError(limit, run.trace)
        config = run.configuration = microstep(tables, config, enabled, event, run)


def macrostep(
    tables: Tables,
    config: Configuration | frozenset[int],
    history: History,
    context: Mapping[str, Any],
    event: InternalEvent | None,
    *,
    oracle: GuardOracle | None = None,
    values: ValueDomain = CONCRETE,
    conflicts: ConflictSink = None,
    timers: Timers = NO_TIMERS,
    now_ms: int | None = None,
    selected: tuple[tuple[int, ...], FailedGuard | None] | None = None,
    finalize: tuple[MicrostepPlan, InternalEvent] | None = None,
) -> MacrostepRun:
    """One external event processed to completion (see the module docstring).

    `timers` are the state's armed timers, `now_ms` the clock's reading for the
    step (see `statekit.engine.timers`). `selected` is the outcome of
    `select_transitions` for `event` when the caller has already made that
    selection (with the same inputs, no oracle). `finalize`: the plan of an
    invocation's finalize and the event as it reads it, applied first, before the
    selection (`statekit.engine.finalize_step`); it fires no transition. Raises
    `EvaluationError` or `LivelockError`; the caller's inputs are untouched.
    """
    if not isinstance(config, Configuration):
        config = tables.configuration(frozenset(config))
    run = MacrostepRun(config, context, history, values, conflicts, timers, now_ms, oracle)
    if tables.raises_evaluation_errors:
        run.errors = []
    before = 0
    if finalize is not None:  # the child's event updates the context first
        apply_plan(tables, finalize[0], finalize[1], run)
        if event is not None:  # its evidence shows the event as sent (not as read)
            run.trace[-1] = run.trace[-1]._replace(event=event)
        context, before = run.context, len(run.trace)
    if event is not None:
        if tables.reads_event_meta:  # (the step has done it already for its own events)
            event = with_meta(event, EXTERNAL)
            run.bound = event[1]
        if selected is None:
            selected = select_transitions(
                tables, config, event, context, history, oracle, conflicts, run.errors
            )
        enabled, run.failed_guard = selected
        if run.errors:  # a guard failed to evaluate: false, and error.execution is raised
            queue_error_events(run)
        if not enabled:
            if run.queue:  # error.execution events only: processed in this macrostep
                run_to_completion(tables, run, oracle)
                run.fired = len(run.trace) > before
            return run
        run.fired = True
        # `microstep` without its frame (plans that read history are never cached)
        plan = config.cache.plans.get(enabled) or plan_of(tables, config, enabled, history)
        config = run.configuration = apply_plan(tables, plan, event, run)
        if not run.queue and not config.final:
            # settled: nothing queued and no eventless transition here (the usual end of
            # an event's macrostep) without entering the loop; bench/xstate_peer.py,
            # guarded chart, general path: 0.15 of its 4.5 µs
            eventless = config.cache.eventless or eventless_entry(tables, config)
            if eventless.fixed == ():
                return run
    run_to_completion(tables, run, oracle)
    return run


def initial_macrostep(
    tables: Tables,
    context: Mapping[str, Any],
    *,
    oracle: GuardOracle | None = None,
    values: ValueDomain = CONCRETE,
    conflicts: ConflictSink = None,
    now_ms: int | None = None,
) -> MacrostepRun:
    """Enter the root's initial configuration (SCXML's initial transition), then run
    eventless transitions and internal events to completion (arming the timers of
    the states entered; `now_ms` as for `macrostep`)."""
    empty = tables.configuration(frozenset())
    run = MacrostepRun(empty, context, {}, values, conflicts, NO_TIMERS, now_ms, oracle)
    if tables.raises_evaluation_errors:
        run.errors = []
    entry = tuple(s for s in tables.states[0].default_entry if s != 0)
    plan = build_plan(tables, empty, (), (), entry)
    run.fired = True
    run.configuration = apply_plan(tables, plan, None, run)
    run_to_completion(tables, run, oracle)
    return run

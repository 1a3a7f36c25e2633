"""The W3C SCXML interpretation algorithm over the compiled chart.

https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation

The procedures keep the spec's names: `select_transitions`,
`select_eventless_transitions`, `remove_conflicting_transitions`,
`compute_exit_set`, `compute_entry_set` (through
`statekit.compiler.scxml_procedures`, shared with the compiler), `microstep` and
`macrostep` (the spec's mainEventLoop body for one external event). Our root
plays `<scxml>`: it is never exited or entered, and once it is in a final
state (a top-level final state; for a parallel root, every region final) the
macrostep stops, like the spec's `running = false`.

Deviations from the spec, all deliberate: an expression that raises is not
`error.execution` but aborts the macrostep with `EvaluationError` (the step
is rejected, nothing changes); a macrostep longer than
`Tables.max_microsteps` aborts with `LivelockError`; event names match
exactly (no prefix matching; `done.state.<path>` uses dotted paths).

`macrostep` is a pure function of (tables, configuration, history, context,
event): it never mutates its arguments and keeps no state between calls
except the caches in `tables` and each `ConfigurationCache`, which only
remember results. `history` maps history-state ids to recorded state ids.
`event=None` runs only the eventless transitions and internal events (to
completion). Guards are evaluated by `evaluation.first_failing_guard`; a
raising guard is an `EvaluationError`. Guards of candidate transitions that
are not needed are never evaluated (selection stops at the first enabled
candidate of each atomic state), and a transition whose guards failed once
is not evaluated again in the same selection.

Callers: the classified step (`statekit.engine.step`), the memo of
data-free macrosteps (`statekit.engine.memo`) and abstract execution
(`statekit.engine.abstract`, the static analysis's only door in), which
passes a `GuardOracle` to decide guards, the `ABSTRACT` value domain and a
list that collects the conflict resolutions met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler import scxml_procedures
from statekit.compiler.expressions.event_meta import EXTERNAL, INTERNAL, with_meta
from statekit.compiler.ir import GuardCheck, Transition
from statekit.engine.effect_interpreter import queue_error_events, run_effects
from statekit.engine.errors import EvaluationError, LivelockError
from statekit.engine.evaluation import first_failing_guard
from statekit.engine.macrostep_run import ConditionOracle, FailedGuard, MacrostepRun
from statekit.engine.plans import build_plan
from statekit.engine.tables import (
    Configuration,
    ConflictLoss,
    EventEntry,
    MicrostepPlan,
    Tables,
    TransitionConflict,
)
from statekit.engine.timers import NO_TIMERS, Timers
from statekit.engine.trace import AppliedMicrostep, AssignedValue, InternalEvent
from statekit.engine.value_domain import CONCRETE, ValueDomain

History = Mapping[int, tuple[int, ...]]
GuardOracle = ConditionOracle
"""Decides one guard: (check, transition, context, payload, active ids) -> passes? The
transition is None for the condition of an `if` effect (`effect_interpreter`)."""
ErrorSink = list[str] | None
"""Where selections put the messages of guards that failed to evaluate (a chart with
`on_evaluation_error: raise`); None: such a guard raises `EvaluationError`."""
ConflictSink = list[TransitionConflict] | None
"""Where selections report the conflict resolutions that removed a transition (None: nowhere)."""
_new = tuple.__new__
NO_HISTORY: History = {}
"""The empty history (a data-free selection never reads history)."""


def _entry(
    tables: Tables, config: Configuration, chains: list[tuple[Transition, ...]]
) -> EventEntry:
    """Selection inputs; the fixed selection when no candidate has a guard."""
    fixed: tuple[int, ...] | None = None
    found: list[TransitionConflict] = []
    if not any(t.guards for chain in chains for t in chain):
        firsts = tuple(dict.fromkeys(chain[0].id for chain in chains))
        if len(firsts) <= 1 or tables.history_targeting.isdisjoint(firsts):
            fixed = remove_conflicting_transitions(tables, config, firsts, NO_HISTORY, found)
    return EventEntry(chains=tuple(chains), fixed=fixed, conflict=found[0] if found else None)


def event_entry(tables: Tables, config: Configuration, event: str) -> EventEntry:
    """The selection inputs of `event` in `config` (cached in the configuration)."""
    entry = config.cache.events.get(event)
    if entry is None:
        candidates = tables.chart.candidates
        transitions = tables.transitions
        chains = []
        for state in config.atomic:
            ids = candidates[state].get(event)
            if ids:
                chains.append(tuple(transitions[t] for t in ids))
        entry = config.cache.events[event] = _entry(tables, config, chains)
    return entry


def eventless_entry(tables: Tables, config: Configuration) -> EventEntry:
    """The selection inputs of the eventless transitions in `config` (cached)."""
    entry = config.cache.eventless
    if entry is None:
        eventless = tables.chart.eventless
        transitions = tables.transitions
        chains = [
            tuple(transitions[t] for t in eventless[s]) for s in config.atomic if eventless[s]
        ]
        entry = config.cache.eventless = _entry(tables, config, chains)
    return entry


def _select(
    tables: Tables,
    config: Configuration,
    entry: EventEntry,
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    history: History,
    oracle: GuardOracle | None,
    found: ConflictSink,
    errors: ErrorSink = None,
) -> tuple[tuple[int, ...], FailedGuard | None]:
    """The selection loop of selectTransitions: per atomic state in document order,
    the first enabled candidate of it and its ancestors. With `errors` (a chart with
    `on_evaluation_error: raise`), a guard that fails to evaluate is false and its error
    is appended there instead of raised."""
    if entry.fixed is not None:
        if found is not None and entry.conflict is not None:
            found.append(entry.conflict)
        return entry.fixed, None
    first_failure: FailedGuard | None = None
    active = config.ids
    chains = entry.chains
    if len(chains) == 1 and oracle is None and errors is None:
        # one atomic state with candidates (every event of a flat chart): its first enabled
        # candidate, without the list, the set and the conflict check (nothing to conflict
        # with); bench/xstate_peer.py's guarded chart, general path: 0.2 of its 4.7 µs
        for t in chains[0]:
            if t.guards:
                failed_check = first_failing_guard(t.guards, context, payload, active)
                if failed_check is not None:
                    if first_failure is None:
                        first_failure = (failed_check, t)
                    continue
            return (t.id,), first_failure
        return (), first_failure
    enabled: list[int] = []
    failed: set[int] = set()
    for chain in chains:
        for t in chain:
            tid = t.id
            if tid in enabled:
                break
            if tid in failed:
                continue
            failing: GuardCheck | None = None
            if not t.guards:
                pass
            elif oracle is None:
                if errors is None:
                    failing = first_failing_guard(t.guards, context, payload, active)
                else:
                    failing = _first_failing_softly(t.guards, context, payload, active, errors)
            else:
                for check in t.guards:
                    if not oracle(check, t, context, payload, active):
                        failing = check
                        break
            if failing is not None:
                failed.add(tid)
                if first_failure is None:
                    first_failure = (failing, t)
            else:
                enabled.append(tid)
                break
    kept = remove_conflicting_transitions(tables, config, tuple(enabled), history, found)
    return kept, first_failure


def _first_failing_softly(
    guards: tuple[GuardCheck, ...],
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    active: frozenset[int],
    errors: list[str],
) -> GuardCheck | None:
    """`first_failing_guard`, with a guard that fails to evaluate counted as false (SCXML)
    and its message appended to `errors`."""
    try:
        return first_failing_guard(guards, context, payload, active)
    except EvaluationError as exc:
        errors.append(str(exc))
        return next(c for c in guards if c.expression is exc.expression)


def select_transitions(
    tables: Tables,
    config: Configuration,
    event: InternalEvent,
    context: Mapping[str, Any],
    history: History,
    oracle: GuardOracle | None = None,
    found: ConflictSink = None,
    errors: ErrorSink = None,
) -> tuple[tuple[int, ...], FailedGuard | None]:
    """SCXML selectTransitions: the conflict-free enabled transitions for `event`,
    and the first guard that failed on the way (for the classification); `errors` as
    for `_select`."""
    name, payload = event
    entry = config.cache.events.get(name) or event_entry(tables, config, name)
    if entry.fixed is not None and found is None:  # guard-free: without `_select`'s frame
        return entry.fixed, None  # (every event of bench/xstate_peer.py's flat chart)
    return _select(tables, config, entry, context, payload, history, oracle, found, errors)


def select_eventless_transitions(
    tables: Tables,
    config: Configuration,
    context: Mapping[str, Any],
    history: History,
    oracle: GuardOracle | None = None,
    found: ConflictSink = None,
    errors: ErrorSink = None,
) -> tuple[int, ...]:
    """SCXML selectEventlessTransitions (`always`), with no event payload in scope;
    `errors` as for `_select`."""
    entry = config.cache.eventless or eventless_entry(tables, config)
    if entry.fixed is not None and found is None:  # the common case, without a call
        return entry.fixed
    return _select(tables, config, entry, context, {}, history, oracle, found, errors)[0]


def _domain(tables: Tables, t: Transition, history: History) -> int | None:
    if not t.targets_history:
        return t.domain
    return scxml_procedures.transition_domain(tables.states, t.source, t.targets, history.get)


def compute_exit_set(
    tables: Tables, config: Configuration, transitions: tuple[int, ...], history: History
) -> tuple[int, ...]:
    """SCXML computeExitSet: active descendants of each transition's domain, in exit order."""
    out: set[int] = set()
    states = tables.states
    for tid in transitions:
        t = tables.transitions[tid]
        domain = _domain(tables, t, history) if t.targets else None
        if domain is None:
            continue
        last = states[domain].last_descendant
        out.update(s for s in config.ordered if domain < s <= last)
    return tuple(sorted(out, reverse=True))


def compute_entry_set(
    tables: Tables, transitions: tuple[int, ...], history: History
) -> tuple[int, ...]:
    """SCXML computeEntrySet (one builder for all transitions), in entry order."""
    if len(transitions) == 1:
        static = tables.transitions[transitions[0]].entry_set
        if static is not None:
            return static
    builder = scxml_procedures.EntrySetBuilder(tables.states, history.get)
    for tid in transitions:
        t = tables.transitions[tid]
        if t.targets:
            builder.add_transition(t.targets, _domain(tables, t, history))
    return builder.result()


def remove_conflicting_transitions(
    tables: Tables,
    config: Configuration,
    enabled: tuple[int, ...],
    history: History,
    found: ConflictSink = None,
) -> tuple[int, ...]:
    """SCXML removeConflictingTransitions: of two transitions with intersecting exit
    sets, the one whose source is a descendant of the other's wins, else the earlier.

    When it removes a transition and `found` is a list, the `TransitionConflict` is appended.
    """
    if len(enabled) <= 1:
        return enabled
    cacheable = tables.history_targeting.isdisjoint(enabled)
    if cacheable:
        cached = config.cache.conflicts.get(enabled)
        if cached is not None:
            if found is not None and cached[1] is not None:
                found.append(cached[1])
            return cached[0]
    states = tables.states
    filtered: list[int] = []
    exit_sets: dict[int, frozenset[int]] = {}
    for t1 in enabled:
        exits1 = exit_sets[t1] = frozenset(compute_exit_set(tables, config, (t1,), history))
        source1 = tables.transitions[t1].source
        preempted = False
        to_remove: list[int] = []
        for t2 in filtered:
            if exits1 & exit_sets[t2]:
                if scxml_procedures.is_descendant(states, source1, tables.transitions[t2].source):
                    to_remove.append(t2)
                else:
                    preempted = True
                    break
        if not preempted:
            for t3 in to_remove:
                filtered.remove(t3)
            filtered.append(t1)
    result = tuple(filtered)
    conflict = None
    if len(result) < len(enabled):
        conflict = _conflict(tables, config, enabled, result, exit_sets)
        if found is not None:
            found.append(conflict)
    if cacheable:
        config.cache.conflicts[enabled] = (result, conflict)
    return result


def _conflict(
    tables: Tables,
    config: Configuration,
    enabled: tuple[int, ...],
    kept: tuple[int, ...],
    exit_sets: Mapping[int, frozenset[int]],
) -> TransitionConflict:
    """The record of a resolution that removed transitions (see `TransitionConflict`)."""
    states, transitions = tables.states, tables.transitions
    losses = []
    for dropped in enabled:
        if dropped in kept:
            continue
        for winner in kept:
            common = exit_sets[winner] & exit_sets[dropped]
            if not common:
                continue
            a, b = transitions[winner].source, transitions[dropped].source
            is_descendant = scxml_procedures.is_descendant
            nested = is_descendant(states, a, b) or is_descendant(states, b, a)
            losses.append(
                ConflictLoss(
                    kept=winner, dropped=dropped, common_exits=common, by_document_order=not nested
                )
            )
    return TransitionConflict(
        configuration=config, enabled=enabled, kept=kept, losses=tuple(losses)
    )


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
    if plan.segments:
        payload = event[1] if event is not None else {}
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
            tables, config, run.context, run.history, oracle, found, errors
        )
        if errors:
            queue_error_events(run)
        if not enabled:
            if not queue:
                break
            event = queue.pop(0)
            if tables.reads_event_meta:
                event = with_meta(event, INTERNAL)
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
) -> MacrostepRun:
    """One external event processed to completion (see the module docstring).

    `timers` are the state's armed timers, `now_ms` the clock's reading for the
    step (see `statekit.engine.timers`). `selected` is the outcome of
    `select_transitions` for `event` when the caller has already made that
    selection (with the same inputs, no oracle). Raises `EvaluationError` or
    `LivelockError`; the caller's inputs are untouched.
    """
    if not isinstance(config, Configuration):
        config = tables.configuration(frozenset(config))
    run = MacrostepRun(config, context, history, values, conflicts, timers, now_ms, oracle)
    if tables.raises_evaluation_errors:
        run.errors = []
    if event is not None:
        if tables.reads_event_meta:  # (the step has done it already for its own events)
            event = with_meta(event, EXTERNAL)
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
                run.fired = bool(run.trace)
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

"""The general path of one event, compiled per (configuration, event) into one closure.

When the memo of data-free macrosteps (`statekit.engine.memo`) does not answer an
event (a guard or an effect reads data, or the memo is off: `Chart(memo=False)`),
`step` selects the event's transitions with the compiled selection
(`statekit.engine.compiled_choice`), then runs the compiled macrostep of what it
selected (`statekit.engine.compiled_macrostep`) and makes its result
(`statekit.engine.macrostep_results.compiled_result`). For the common shape of a
flat chart's event, that is three lookups, three calls and a selection tuple per
event around little work: one atomic state (with its ancestors) has the candidates,
and the macrostep each candidate starts is one microstep without timers, whose
evidence is prebuilt (`statekit.engine.compiled_evidence`). `compiled_event` fuses
that shape into one function of (state, checked payload, event id), built once per
configuration and event (cached in `config.cache.fused`):

- the candidates are tried in document order, each guard's evaluator called
  directly (a guard-free selection is fixed);
- the chosen transition's effects run on a copy of the context, as
  `compiled_result` runs them;
- the `Result` is made directly, with its evidence: the one `Microstep` of the
  prebuilt evidence and this event's payload, changes and messages
  (`compiled_evidence.one_microstep`), or, when the microstep has no data at all (no
  payload, no change, no message), one evidence tuple made once and shared (its
  records are frozen).

The result is the one `compiled_result` gives (the differential tests compare both,
and their evidence bytes, with the reference loop's). Whatever needs words or a
second look returns None, and `step` takes the path it took before for that event:
a guard that raises (the selection words the `EvaluationError`), an invariant that
breaks or fails (`applied` words the rejection). An effect's `EvaluationError` is the
`EVALUATION_ERROR` rejection `step` makes of it. Anything else (candidates in
several regions, a macrostep of several microsteps or with timers, a chart with
secrets, with `raise` on an evaluation error, or reading `_event`) is `NOT_COMPILED`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

from statekit.compiler.ir import Assign, GuardCheck, Transition
from statekit.engine.applied_results import messages
from statekit.engine.compiled_evidence import one_microstep
from statekit.engine.compiled_macrostep import CompiledMacrostep, compiled_macrostep
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import assigned_value, first_failing_guard
from statekit.engine.invariants import broken_invariant
from statekit.engine.result import EVALUATION_ERROR, Microstep, Result, Status
from statekit.engine.selection import event_entry
from statekit.engine.state import State
from statekit.engine.tables import EMPTY, Configuration, Tables
from statekit.engine.trace import AssignedValue
from statekit.engine.unselected import unselected
from statekit.engine.validation import INT_MAX, INT_MIN

EventStep = Callable[[State, Mapping[str, Any], "str | None"], "Result | None"]
"""(state, checked payload, event id) -> the step's result, or None: take the other path."""
Assignment = tuple[str, Callable[..., Any], Callable[..., Any], frozenset[int]]
"""One `assign` of a field: (field, the expression's evaluator, the failure that words
its error, the active states it sees)."""

NOT_COMPILED = False
"""What the cache holds for an event `step` handles without a fused function."""

APPLIED = Status.APPLIED
REJECTED = Status.REJECTED


def compiled_event(tables: Tables, config: Configuration, event: str) -> EventStep | bool:
    """The fused general path of `event` in `config`, or `NOT_COMPILED` (cached per
    configuration in `config.cache.fused`)."""
    found = config.cache.fused.get(event)
    if found is None:
        found = config.cache.fused[event] = _compile(tables, config, event)
    return found


def _compile(tables: Tables, config: Configuration, event: str) -> EventStep | bool:
    if tables.raises_evaluation_errors or tables.reads_event_meta or config.final:
        return NOT_COMPILED
    entry = event_entry(tables, config, event)
    options: list[tuple[tuple[GuardCheck, ...], Transition | None, tuple[int, ...]]]
    if entry.fixed is not None:
        if not entry.fixed:
            return NOT_COMPILED  # nothing to select: `unselected` classifies it
        options = [((), None, entry.fixed)]
    elif len(entry.chains) == 1:
        options = [(t.guards, t, (t.id,)) for t in entry.chains[0]]
    else:
        return NOT_COMPILED  # candidates in several regions: conflict resolution decides
    macrosteps: list[CompiledMacrostep] = []
    for _, _, ids in options:
        compiled = compiled_macrostep(tables, config, ids)
        if compiled.__class__ is not CompiledMacrostep:
            return NOT_COMPILED
        assert isinstance(compiled, CompiledMacrostep)
        if compiled.evidence is None:  # several microsteps, timers or secrets
            return NOT_COMPILED
        macrosteps.append(compiled)
    if len(options) == 1 and len(options[0][0]) <= 1:
        guards, transition, _ = options[0]
        guard = None if not guards else (guards[0], transition)
        return _fused(tables, event, config.ids, guard, macrosteps[0])
    appliers = [_fused(tables, event, config.ids, None, m) for m in macrosteps]
    return _in_order(tables, event, config.ids, options, appliers)


def _in_order(
    tables: Tables,
    event: str,
    active: frozenset[int],
    options: list[tuple[tuple[GuardCheck, ...], Transition | None, tuple[int, ...]]],
    appliers: list[EventStep],
) -> EventStep:
    """Any candidates of one atomic state: the first whose guards all hold."""
    steps = tuple(
        (guards, transition, apply)
        for (guards, transition, _), apply in zip(options, appliers, strict=True)
    )

    def fused(state: State, payload: Mapping[str, Any], event_id: str | None) -> Result | None:
        context = state._context
        first_failure = None
        for guards, transition, apply in steps:
            if guards:
                try:
                    failing = first_failing_guard(guards, context, payload, active)
                except EvaluationError:  # the selection words it
                    return None
                if failing is not None:
                    if first_failure is None:
                        first_failure = (failing, transition)
                    continue
            return apply(state, payload, event_id)
        return unselected(tables, state, event, event_id, first_failure)  # type: ignore[arg-type]

    return fused


def _assignments(compiled: CompiledMacrostep) -> tuple[Assignment, ...] | None:
    """The microstep's effects as (field, evaluator, failure) when they all assign (the
    usual case), for `_fused` to run inline; None when any emits or arms."""
    found: list[Assignment] = []
    for segment in compiled.steps[0].plan.segments:
        for effect in segment.effects:
            if effect.__class__ is not Assign:
                return None
            assert isinstance(effect, Assign)
            for field, expression in effect.assignments:
                fail = partial(assigned_value, field, expression)
                found.append((field, expression.evaluate, fail, segment.active))
    return tuple(found)


def _fused(
    tables: Tables,
    event: str,
    active: frozenset[int],
    guard: tuple[GuardCheck, Transition | None] | None,
    compiled: CompiledMacrostep,
) -> EventStep:
    """The event's one candidate (its one guard, if any) and the compiled one-microstep
    macrostep it starts, as one function: the guard's evaluator called directly, the
    assignments run inline (the same checks as `evaluation.checked`, whose two frames
    per assignment they save), the `Result` made directly. With the guard and the
    assignments inline the guarded chart of bench/xstate_peer.py took 40,500
    instructions an event with its evidence built, against 42,100 with the guard and
    the applying in two closures and the assignments through their effect closures
    (callgrind, 4,000 events); bench/engine_paths.py, the whole fused path against the
    code before it: 3.04 -> 2.57 µs an event, 4.26 -> 3.70 µs with the evidence built."""
    effects = compiled.steps[0].effects
    assignments = _assignments(compiled)
    assigns = compiled.assigns
    target = compiled.target
    updates = dict(compiled.history_updates)
    checks_invariants = bool(tables.chart.invariants)
    prebuilt = compiled.evidence
    assert prebuilt is not None
    # the evidence of the microstep without data, made once and shared (frozen records)
    constant = one_microstep(prebuilt, event, EMPTY, (), ())
    fired, exited, entered, raised = prebuilt
    view = MappingProxyType
    new_object, init_state, init_result = object.__new__, State.__init__, Result.__init__
    evaluate = None if guard is None else guard[0].expression.evaluate
    failed = guard
    isfinite = math.isfinite
    new = tuple.__new__

    def fused(state: State, payload: Mapping[str, Any], event_id: str | None) -> Result | None:
        ctx: Any = state._context
        if evaluate is not None:
            try:
                holds = evaluate(ctx, payload, active)
            except Exception:  # the selection words it
                return None
            if not holds:
                return unselected(tables, state, event, event_id, failed)  # type: ignore[arg-type]
        if assigns:
            ctx = dict(ctx)
        changes: list[AssignedValue] = []
        outbox: list[tuple[str, dict[str, Any]]] | None = None  # (assignments emit nothing)
        try:
            if assignments is not None:
                for field, value_of, fail, where in assignments:
                    try:
                        value = value_of(ctx, payload, where)
                    except Exception:
                        value = fail(ctx, payload, where)  # raises EvaluationError
                    cls = value.__class__
                    if (cls is int and not INT_MIN <= value <= INT_MAX) or (
                        cls is float and not isfinite(value)
                    ):
                        value = fail(ctx, payload, where)  # raises EvaluationError
                    changes.append(new(AssignedValue, (field, ctx[field], value)))
                    ctx[field] = value
                made = tuple(changes)
            else:
                outbox = []
                for effect in effects:
                    effect(ctx, payload, changes, outbox, None)
                made = tuple(changes)
        except EvaluationError as exc:
            return Result(REJECTED, EVALUATION_ERROR, state, event, event_id, message=str(exc))
        if checks_invariants:
            try:
                if broken_invariant(tables, target, ctx) is not None:
                    return None  # `applied` words the rejection
            except EvaluationError:
                return None  # (and the failure)
        history = state._history
        if updates:
            history = {**history, **updates}
        emitted = messages(tables, state, event, payload, event_id, outbox) if outbox else ()
        # the records made without their classes' call (`object.__new__` and `__init__` as
        # plain functions, which Python 3.11 runs in this frame's loop): 400 instructions
        # less an event on bench/xstate_peer.py's guarded chart (callgrind)
        after = new_object(State)
        init_state(after, target, ctx, history, state._timers)
        result = new_object(Result)
        init_result(result, APPLIED, None, after, event, event_id, emitted)
        # the evidence made now, not on first read: one C call (see `one_microstep`); its
        # usual shape (a payload, no message) inline, without that function's frame
        # (bench/xstate_peer.py's guarded chart: 36,600 -> 35,600 instructions an event)
        if emitted or not payload:
            result._evidence = (
                constant
                if not payload and not made and not emitted
                else one_microstep(prebuilt, event, payload, made, emitted)
            )
        else:
            shown = payload if payload.__class__ is view else view(payload)
            fields = (event, shown, fired, exited, entered, made, (), raised, (), (), ())
            result._evidence = (new(Microstep, fields),)
        return result

    return fused

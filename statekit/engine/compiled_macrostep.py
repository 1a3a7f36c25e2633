"""The engine's fast general path: a macrostep whose structure is static, compiled once.

Once the external event's transitions are selected, most macrosteps follow a
path that depends on the configuration alone: the event's microstep, then
eventless transitions whose selection reads no data (guard-free, or guards
that only test `active(...)`), then the `done.state.*` events its final
states raised, which either nothing answers or whose selection reads no data
either; it ends when no eventless transition is enabled and the queue is
empty, or when the chart is final. Only the effects read data. For such a
(configuration, transitions) pair `compiled_macrostep` works the path out once
with the SCXML procedures of `statekit.engine.algorithm` (the same selections,
plans and conflict resolutions the general loop makes) and compiles each
microstep's effects into a tuple of closures over the expressions' own
evaluators, in the order `effect_interpreter.run_effects` runs them: `assign`,
`emit`, and the evaluation of the `at:`/`delay:` expressions of the `after`
timers the engine arms; the arming and cancelling themselves become the
macrostep's `TimerPlan` (`statekit.engine.timer_plan`). `step` then runs it
without the general loop (no `MacrostepRun`, no internal queue, no selection at
run time, no `TimerRun` unless the timers it armed and cancelled are read).

The result is the one the general macrostep gives: the same context (copied
once, each effect seeing the fields assigned before it), the same outbox
bodies, the same trace (`AppliedMicrostep` per microstep, with the done events
each raised) and so the same evidence, the same timers (the new state's, and
the `TimerRun` the general loop would have made, replayed when read), the same
`EvaluationError` (values are checked by `evaluation.checked`, which hands
failures to the one value evaluator). A path with anything else (a `raise`, a
`send` or `cancel`, a transition that targets a history state, a selection
whose guards read the context or the payload, a path longer than the chart's
microstep bound, a second microstep in a chart that reads `_event`, whose effects
would need the bound event's meta) is marked `NOT_COMPILED`, and `step` runs the general
macrostep, given the selection it has already made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.ir import Assign, Emit, TimerKind
from statekit.engine.algorithm import plan_of
from statekit.engine.compiled_evidence import PrebuiltEvidence, prebuilt_evidence
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import Evaluate, assigner, computer
from statekit.engine.selection import (
    event_entry,
    eventless_entry,
    select_eventless_transitions,
    select_transitions,
)
from statekit.engine.tables import EMPTY, Configuration, EventEntry, MicrostepPlan, Tables
from statekit.engine.timer_plan import VALUES, TimerOp, TimerPlan
from statekit.engine.timers import TIMER_MS_MAX, TIMER_MS_MIN, ArmTimers, CancelTimers
from statekit.engine.trace import AssignedValue, InternalEvent
from statekit.engine.transition_sets import NO_HISTORY
from statekit.engine.value_domain import CONCRETE

Outbox = list[tuple[str, dict[str, Any]]]
Effect = Callable[
    [dict[str, Any], Mapping[str, Any], list[AssignedValue], Outbox, "list[Any] | None"], None
]
"""One fused effect: (context being written, payload, changes, outbox, the step's pending
timer record (`statekit.engine.timer_plan.resolve`) when the macrostep has timers) -> None."""
_new = tuple.__new__
AFTER = TimerKind.AFTER
"""A literal `after:` delay (the other kinds, `at:` and `delay:`, are expressions)."""


@dataclass(frozen=True, slots=True)
class CompiledMicrostep:
    """One microstep of a compiled macrostep: its plan, its effects as closures, the
    event that triggers it (None for the external event's, which the step supplies,
    and for an eventless one; `(done.state.<path>, {})` for a done event's) and the
    done events it raises, in order."""

    plan: MicrostepPlan
    effects: tuple[Effect, ...]
    event: InternalEvent | None
    raised: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CompiledMacrostep:
    """A compiled macrostep: its microsteps (the external event's first), where it ends,
    whether any effect assigns (else the context is shared, never copied), its timer
    operations when it arms or cancels any (`statekit.engine.timer_plan`), the
    history records of its exits merged in order, and, for one microstep without
    timers in a chart without secrets, its prebuilt evidence
    (`statekit.engine.compiled_evidence`)."""

    steps: tuple[CompiledMicrostep, ...]
    target: Configuration
    assigns: bool
    timers: TimerPlan | None
    history_updates: tuple[tuple[int, tuple[int, ...]], ...]
    evidence: PrebuiltEvidence | None = None

    @property
    def plan(self) -> MicrostepPlan:
        """The plan of the external event's microstep."""
        return self.steps[0].plan


NOT_COMPILED = False
"""What the cache holds for a transition set whose macrostep has no static structure."""


def compiled_macrostep(
    tables: Tables, config: Configuration, transitions: tuple[int, ...]
) -> CompiledMacrostep | bool:
    """The compiled macrostep of firing `transitions` in `config`, or `NOT_COMPILED`
    (cached per configuration in `config.cache.single`)."""
    found = config.cache.single.get(transitions)
    if found is None:
        found = config.cache.single[transitions] = _compile(tables, config, transitions)
    return found


def _reads_data(entry: EventEntry) -> bool:
    """Whether a selection over `entry` may depend on the context, the payload or the
    clock."""
    return any(
        check.expression.reads_context()
        or check.expression.reads_event()
        or check.expression.reads_clock()
        for chain in entry.chains
        for t in chain
        for check in t.guards
    )


def _static_selection(
    tables: Tables, config: Configuration, entry: EventEntry, event: str | None
) -> tuple[int, ...] | None:
    """The selection of the eventless transitions (`event` None) or of a done event in
    `config` when it reads no data (made by the general procedures, guards evaluated
    on the active states alone), else None."""
    if entry.fixed is not None:
        return entry.fixed
    if _reads_data(entry):
        return None
    try:
        if event is None:
            return select_eventless_transitions(tables, config, EMPTY, NO_HISTORY)
        return select_transitions(tables, config, (event, EMPTY), EMPTY, NO_HISTORY)[0]
    except EvaluationError:  # a constant expression that fails: the general loop words it
        return None


def _compile(
    tables: Tables, config: Configuration, transitions: tuple[int, ...]
) -> CompiledMacrostep | bool:
    """Walk the macrostep as `algorithm.run_to_completion` would, selections made once."""
    history_targeting = tables.history_targeting
    limit = tables.max_microsteps
    steps: list[CompiledMicrostep] = []
    queue: list[str] = []
    history: list[tuple[int, tuple[int, ...]]] = []
    ops: list[TimerOp] = []
    assigns = False
    current, enabled = config, transitions
    event: InternalEvent | None = None
    while True:
        if not history_targeting.isdisjoint(enabled) or len(steps) >= limit:
            return NOT_COMPILED  # the plan reads the history, or a livelock to word
        if steps and tables.reads_event_meta:
            return NOT_COMPILED  # its effects may read `_event`: the bound event's meta
        plan = plan_of(tables, current, enabled, NO_HISTORY)
        compiled = _compile_effects(plan, len(steps), ops)
        if compiled is None:
            return NOT_COMPILED
        effects, raised, assigned = compiled
        assigns = assigns or assigned
        history.extend(plan.history_updates)
        steps.append(CompiledMicrostep(plan=plan, effects=effects, event=event, raised=raised))
        queue.extend(raised)
        current = plan.target
        if current.final:
            break
        selected = _static_selection(tables, current, eventless_entry(tables, current), None)
        if selected is None:
            return NOT_COMPILED
        event = None
        while not selected and queue:
            name = queue.pop(0)
            selected = _static_selection(tables, current, event_entry(tables, current, name), name)
            if selected is None:
                return NOT_COMPILED
            event = (name, EMPTY)
        if not selected:
            break
        enabled = selected
    evidence = None
    if len(steps) == 1 and not ops:
        evidence = prebuilt_evidence(tables, steps[0].plan, steps[0].raised)
    return CompiledMacrostep(
        steps=tuple(steps),
        target=current,
        assigns=assigns,
        timers=TimerPlan.of(ops) if ops else None,
        history_updates=tuple(history),
        evidence=evidence,
    )


def _compile_effects(
    plan: MicrostepPlan, index: int, ops: list[TimerOp]
) -> tuple[tuple[Effect, ...], tuple[str, ...], bool] | None:
    """A plan's effects as closures (its timer effects appended to `ops`), its raised
    done events and whether it assigns; None when an effect needs the general
    interpreter."""
    effects: list[Effect] = []
    raised: list[str] = []
    assigns = False
    for segment in plan.segments:
        for effect in segment.effects:
            cls = effect.__class__
            if cls is Assign:
                assert isinstance(effect, Assign)
                effects.extend(_assign(f, e, segment.active) for f, e in effect.assignments)
                assigns = True
            elif cls is Emit:
                assert isinstance(effect, Emit)
                effects.append(_emit(effect, segment.active))
            elif cls is ArmTimers:
                assert isinstance(effect, ArmTimers)
                effects.extend(_arm(effect, segment.active, index, ops))
            elif cls is CancelTimers:  # no closure: it reads no data (see timer_plan)
                assert isinstance(effect, CancelTimers)
                ops.append((index, effect.state, None, None, None, -1))
            else:  # raise, send, cancel: the general interpreter runs them
                return None
        if segment.output and segment.done:  # a done event with a payload: the general path
            return None
        raised.extend(segment.done)
    return tuple(effects), tuple(raised), assigns


def _assign(field: str, expression: Any, active: frozenset[int]) -> Effect:
    value_of = assigner(field, expression)

    def assign(
        ctx: dict[str, Any],
        payload: Mapping[str, Any],
        changes: list[AssignedValue],
        _: Outbox,
        __: list[Any] | None,
    ) -> None:
        value = value_of(ctx, payload, active)
        changes.append(_new(AssignedValue, (field, ctx[field], value)))
        ctx[field] = value

    return assign


def _emit(effect: Emit, active: frozenset[int]) -> Effect:
    kind = effect.type
    fields: tuple[tuple[str, Evaluate], ...] = tuple(
        (key, computer(f"emit {kind} field '{key}'", expr)) for key, expr in effect.payload
    )

    def emit(
        ctx: dict[str, Any],
        payload: Mapping[str, Any],
        _: list[AssignedValue],
        outbox: Outbox,
        __: list[Any] | None,
    ) -> None:
        outbox.append((kind, {key: value_of(ctx, payload, active) for key, value_of in fields}))

    return emit


def _arm(effect: ArmTimers, active: frozenset[int], at: int, ops: list[TimerOp]) -> list[Effect]:
    """A state's `after` timers armed after its entry effects, as
    `timer_effects.run_timer_effect` arms them: each becomes an operation of the
    macrostep's `TimerPlan`, and each `at:`/`delay:` expression an effect that
    evaluates it where the general loop does (any failure, or a value that is not an
    integer in range, is handed to the one value domain's `timed`, which words the
    `EvaluationError`) and appends its value to the step's pending record."""
    owner = effect.state
    effects: list[Effect] = []
    for decl, role in zip(effect.timers, effect.roles, strict=True):
        expression = decl.expression
        if decl.kind is AFTER:
            ops.append((at, owner, decl.name, decl.kind, decl.delay_ms, -1))
            continue
        assert expression is not None
        slot = VALUES + sum(1 for op in ops if op[5] >= 0)
        ops.append((at, owner, decl.name, decl.kind, decl.delay_ms, slot))
        effects.append(_timer_value(role, expression, active))
    return effects


def _timer_value(role: str, expression: Any, active: frozenset[int]) -> Effect:
    # One closure around the expression itself (not `evaluation.checked`'s, whose
    # checks this repeats): it runs on every entry of a state with an `at:` lease.
    evaluate = expression.evaluate
    fail = CONCRETE.timed

    def timer_value(
        ctx: dict[str, Any],
        _: Mapping[str, Any],
        __: list[AssignedValue],
        ___: Outbox,
        record: list[Any] | None,
    ) -> None:
        try:
            value = evaluate(ctx, EMPTY, active)
        except Exception:
            value = fail(role, expression, ctx, EMPTY, active)  # raises EvaluationError
        if value.__class__ is not int or not TIMER_MS_MIN <= value <= TIMER_MS_MAX:
            value = fail(role, expression, ctx, EMPTY, active)  # raises EvaluationError
        assert record is not None
        record.append(value)

    return timer_value

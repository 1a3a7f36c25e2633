"""The engine's fast general path: a macrostep that is exactly one microstep.

Most events select transitions whose microstep runs only `assign` and `emit`
effects, raises nothing (no `raise`, no final state entered that would raise
`done.state.*`) and lands in a configuration without eventless transitions:
the macrostep is then that microstep and nothing else, whatever the data.
For such a (configuration, transitions) pair the plan is compiled once into a
`SingleMicrostep`: its effects become one tuple of closures over the
expressions' own evaluators, in the order `effect_interpreter.run_effects`
runs them, and `step` applies it without the general loop (no
`MacrostepRun`, no internal queue, no eventless selection).

The result is the one the general macrostep gives: the same context (copied
once, each effect seeing the fields assigned before it), the same outbox
bodies, the same trace record (`AppliedMicrostep`) and so the same evidence,
the same `EvaluationError` (values are checked by `evaluation.checked`,
which hands failures to the one value evaluator). A plan with anything else
(timer effects, history-targeting transitions, done events, eventless
transitions after it) is marked as not single, and `step` runs the general
macrostep, given the selection it has already made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.ir import Assign, Emit
from statekit.engine.algorithm import NO_HISTORY, eventless_entry, plan_of
from statekit.engine.evaluation import Evaluate, assigner, computer
from statekit.engine.tables import Configuration, MicrostepPlan, Tables
from statekit.engine.trace import AssignedValue

Outbox = list[tuple[str, dict[str, Any]]]
Effect = Callable[[dict[str, Any], Mapping[str, Any], list[AssignedValue], Outbox], None]
"""One fused effect: (context being written, payload, changes, outbox) -> None."""
_new = tuple.__new__


@dataclass(frozen=True, slots=True)
class SingleMicrostep:
    """A compiled one-microstep macrostep: its plan, its effects as closures, and whether
    any of them assigns (else the context is shared, never copied)."""

    plan: MicrostepPlan
    effects: tuple[Effect, ...]
    assigns: bool

    def run(
        self, context: Mapping[str, Any], payload: Mapping[str, Any]
    ) -> tuple[Mapping[str, Any], tuple[AssignedValue, ...], Outbox]:
        """The context after the effects, the changes they made and the messages they
        emitted; `EvaluationError` when an expression fails (nothing is changed)."""
        ctx: Any = dict(context) if self.assigns else context
        changes: list[AssignedValue] = []
        outbox: Outbox = []
        for effect in self.effects:
            effect(ctx, payload, changes, outbox)
        return ctx, (tuple(changes) if changes else ()), outbox


NOT_SINGLE = False
"""What the cache holds for a transition set whose macrostep is not one microstep."""


def single_microstep(
    tables: Tables, config: Configuration, transitions: tuple[int, ...]
) -> SingleMicrostep | bool:
    """The compiled one-microstep macrostep of firing `transitions` in `config`, or
    `NOT_SINGLE` (cached per configuration in `config.cache.single`)."""
    found = config.cache.single.get(transitions)
    if found is None:
        found = config.cache.single[transitions] = _compile(tables, config, transitions)
    return found


def _compile(
    tables: Tables, config: Configuration, transitions: tuple[int, ...]
) -> SingleMicrostep | bool:
    if not tables.history_targeting.isdisjoint(transitions):
        return NOT_SINGLE  # the plan depends on the recorded history
    plan = plan_of(tables, config, transitions, NO_HISTORY)
    target = plan.target
    if not target.final and eventless_entry(tables, target).fixed != ():
        return NOT_SINGLE  # eventless transitions may follow
    effects: list[Effect] = []
    assigns = False
    for segment in plan.segments:
        if segment.done:
            return NOT_SINGLE  # done.state events follow
        for effect in segment.effects:
            if effect.__class__ is Assign:
                assert isinstance(effect, Assign)
                effects.extend(_assign(f, e, segment.active) for f, e in effect.assignments)
                assigns = True
            elif effect.__class__ is Emit:
                assert isinstance(effect, Emit)
                effects.append(_emit(effect, segment.active))
            else:  # raise, and anything the general interpreter knows better
                return NOT_SINGLE
    return SingleMicrostep(plan=plan, effects=tuple(effects), assigns=assigns)


def _assign(field: str, expression: Any, active: frozenset[int]) -> Effect:
    value_of = assigner(field, expression)

    def assign(
        ctx: dict[str, Any], payload: Mapping[str, Any], changes: list[AssignedValue], _: Outbox
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
        ctx: dict[str, Any], payload: Mapping[str, Any], _: list[AssignedValue], outbox: Outbox
    ) -> None:
        outbox.append((kind, {key: value_of(ctx, payload, active) for key, value_of in fields}))

    return emit

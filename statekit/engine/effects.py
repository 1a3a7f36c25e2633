"""Running effects (`assign`, `emit`, `raise`) and the accumulator of one macrostep.

Nothing external runs: `assign` updates the macrostep's context (copied on
the first write, so the input state's context is never touched), `emit`
appends an outbox message, `raise` queues an internal event. Every effect
sees the context as updated by the effects before it, including the earlier
fields of the same `assign`.

A value an effect computes must have a canonical JSON form and a bounded
size: a float must be finite and an integer must fit in 64 bits (signed),
else the step fails with `EvaluationError` (repeated `x ** 64` would
otherwise grow without bound, and Python refuses to print integers of more
than 4,300 digits).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.expression import Expression
from statekit.compiler.ir import Assign, Emit, Raise
from statekit.engine.tables import EMPTY, Configuration, MicrostepPlan, Segment
from statekit.engine.validation import INT_MAX, INT_MIN

InternalEvent = tuple[str, Mapping[str, Any]]
"""An event as the algorithm sees it: its name and its (validated) payload."""

RawMicrostep = tuple[
    InternalEvent | None,
    MicrostepPlan,
    tuple[tuple[str, Any, Any], ...],
    tuple[int, int],
    tuple[str, ...],
]
"""(event, plan, context changes, emitted slice, raised names): evidence, not yet built."""


class EvaluationError(Exception):
    """An expression failed at runtime (division by zero, overflow, a non-finite result).

    The message names the expression's role, its source and its position; it
    never contains a runtime value.
    """

    def __init__(self, role: str, expression: Expression, problem: str) -> None:
        self.role = role
        self.expression = expression
        self.problem = problem
        super().__init__(f"{role} `{expression.source}` at {expression.span}: {problem}")

    @classmethod
    def from_exception(cls, role: str, expression: Expression, exc: Exception) -> EvaluationError:
        """Wrap an exception raised by an evaluator."""
        return cls(role, expression, f"{type(exc).__name__}: {exc}")


class LivelockError(Exception):
    """The macrostep took more microsteps than the chart allows."""

    def __init__(self, limit: int, trace: list[RawMicrostep]) -> None:
        self.limit = limit
        self.trace = trace
        super().__init__(
            f"the macrostep did not settle within {limit} microsteps "
            "(eventless transitions or raised events keep firing)"
        )


class MacrostepRun:
    """The accumulator and, at the end, the outcome of one macrostep.

    `fired` tells whether the triggering event selected any transition;
    when it did not, `failed_guard` holds the first guard that failed during
    selection (check, transition). `context` and `history` are the input
    mappings themselves until an effect or an exit writes to them. `abstract`
    runs no expression of an effect (see `queue_raised`): static analysis sets
    it, because its context is unknown.
    """

    __slots__ = (
        "abstract",
        "configuration",
        "context",
        "context_owned",
        "emitted",
        "failed_guard",
        "fired",
        "history",
        "history_owned",
        "queue",
        "raised",
        "trace",
    )

    def __init__(
        self,
        configuration: Configuration,
        context: Mapping[str, Any],
        history: Mapping[int, tuple[int, ...]],
    ) -> None:
        self.configuration = configuration
        self.context: Mapping[str, Any] = context
        self.context_owned = False
        self.history: Mapping[int, tuple[int, ...]] = history
        self.history_owned = False
        self.trace: list[RawMicrostep] = []
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self.raised: list[str] = []
        self.queue: list[InternalEvent] = []
        self.fired = False
        self.failed_guard: Any = None
        self.abstract = False


def out_of_range(value: Any) -> str | None:
    """Why a computed value cannot be kept (non-finite, beyond 64 bits), or None."""
    cls = value.__class__
    if cls is float and not math.isfinite(value):
        return "the result is not a finite number"
    if cls is int and not INT_MIN <= value <= INT_MAX:
        return "the result does not fit in a 64-bit integer"
    return None


def _value(role: str, expr: Expression, ctx: Any, payload: Any, active: Any) -> Any:
    try:
        value = expr.evaluate(ctx, payload, active)
    except Exception as exc:
        raise EvaluationError.from_exception(role, expr, exc) from exc
    problem = out_of_range(value)
    if problem is not None:
        raise EvaluationError(role, expr, problem)
    return value


def run_segments(
    segments: tuple[Segment, ...],
    payload: Mapping[str, Any],
    run: MacrostepRun,
    defaults: Mapping[str, Mapping[str, Any]],
) -> tuple[tuple[tuple[str, Any, Any], ...], tuple[str, ...]]:
    """Run a microstep's effects; return its context changes and raised event names."""
    changes: list[tuple[str, Any, Any]] | None = None
    raised: list[str] | None = None
    for effects, active, done in segments:
        for effect in effects:
            if isinstance(effect, Assign):
                ctx = run.context
                if not run.context_owned:
                    ctx = run.context = dict(ctx)
                    run.context_owned = True
                assert isinstance(ctx, dict)
                if changes is None:
                    changes = []
                for field, expr in effect.assignments:
                    try:  # inlined `_value`: assignments are the hottest effect
                        value = expr.evaluate(ctx, payload, active)
                    except Exception as exc:
                        role = f"assign to ctx.{field}"
                        raise EvaluationError.from_exception(role, expr, exc) from exc
                    cls = value.__class__
                    if (cls is int and not INT_MIN <= value <= INT_MAX) or (
                        cls is float and not math.isfinite(value)
                    ):
                        problem = out_of_range(value) or ""
                        raise EvaluationError(f"assign to ctx.{field}", expr, problem)
                    changes.append((field, ctx[field], value))
                    ctx[field] = value
            elif isinstance(effect, Emit):
                body = {
                    key: _value(
                        f"emit {effect.type} field '{key}'", expr, run.context, payload, active
                    )
                    for key, expr in effect.payload
                }
                run.emitted.append((effect.type, body))
            elif isinstance(effect, Raise):
                body = dict(defaults.get(effect.event, {}))
                for key, expr in effect.payload:
                    body[key] = _value(
                        f"raise {effect.event} field '{key}'", expr, run.context, payload, active
                    )
                run.queue.append((effect.event, body))
                if raised is None:
                    raised = []
                raised.append(effect.event)
        for name in done:
            run.queue.append((name, EMPTY))
            if raised is None:
                raised = []
            raised.append(name)
    if raised:
        run.raised.extend(raised)
    return (tuple(changes) if changes else (), tuple(raised) if raised else ())


class AbstractValue:
    """What an abstract macrostep assigns to a context field: an unknown value, a new
    object at each assignment (so identity tells which fields changed)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<abstract>"


def queue_raised(
    segments: tuple[Segment, ...], run: MacrostepRun, defaults: Mapping[str, Mapping[str, Any]]
) -> tuple[str, ...]:
    """A microstep's effects in an abstract macrostep: no expression is evaluated.

    Raised and `done.state.*` events are queued as `run_segments` queues them
    (a raised payload holds only its declared defaults); `emit` does nothing;
    `assign` sets each assigned field to a new `AbstractValue` (in a copy of
    the context, as `run_segments` does). Returns the names raised.
    """
    raised: list[str] = []
    for effects, _active, done in segments:
        for effect in effects:
            if isinstance(effect, Assign):
                ctx = run.context
                if not run.context_owned:
                    ctx = run.context = dict(ctx)
                    run.context_owned = True
                assert isinstance(ctx, dict)
                for field, _expr in effect.assignments:
                    ctx[field] = AbstractValue()
            elif isinstance(effect, Raise):
                run.queue.append((effect.event, dict(defaults.get(effect.event, {}))))
                raised.append(effect.event)
        for name in done:
            run.queue.append((name, EMPTY))
            raised.append(name)
    run.raised.extend(raised)
    return tuple(raised)

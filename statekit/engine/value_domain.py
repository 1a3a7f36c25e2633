"""The two value domains of the effect interpreter: concrete values and abstract ones.

`statekit.engine.effect_interpreter` runs effects by one algorithm; what an
effect's expression yields comes from the run's domain. `CONCRETE` evaluates
(through the one value evaluator, `evaluation.computed_value`); `ABSTRACT`
evaluates nothing, for the static analysis, whose context is unknown: an
assigned field gets a new `AbstractValue` (so identity tells which fields an
`assign` changed), `emit` sends nothing, a raised or sent event carries only its
declared payload defaults, and a timer's delay or due time is unknown (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from statekit.compiler.expressions.expression import Expression
from statekit.compiler.ir import Emit, Raise, Send
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import assigned_value, computed_value
from statekit.engine.timers import TIMER_MS_MAX, TIMER_MS_MIN

if TYPE_CHECKING:  # (the tables import the engine's effects, not the other way)
    from statekit.engine.tables import EffectSegment


class AbstractValue:
    """What an abstract macrostep assigns to a context field: an unknown value, a new
    object at each assignment (so identity tells which fields changed)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<abstract>"


class ValueDomain:
    """What effects compute: the value an `assign` stores, the body an `emit` sends (None:
    nothing is sent) and the payload a `raise` or a `send` queues. The base class is the
    concrete one."""

    __slots__ = ()

    assigned = staticmethod(assigned_value)
    """The value `assign` stores in a field: (field, expression, context, payload, active)."""

    def emitted(
        self,
        effect: Emit,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> dict[str, Any] | None:
        """The body of the outbox message `emit` sends, or None when nothing is sent."""
        return {
            key: computed_value(f"emit {effect.type} field '{key}'", expr, context, payload, active)
            for key, expr in effect.payload
        }

    def queued(
        self,
        effect: Raise | Send,
        defaults: Mapping[str, Any],
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> dict[str, Any]:
        """The payload of the event a `raise` (internal queue) or a `send` (external
        queue) delivers: the declared defaults, then the effect's fields."""
        verb = "raise" if isinstance(effect, Raise) else "send"
        body = dict(defaults)
        for key, expr in effect.payload:
            body[key] = computed_value(
                f"{verb} {effect.event} field '{key}'", expr, context, payload, active
            )
        return body

    def done_payload(
        self,
        segment: EffectSegment,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> dict[str, Any]:
        """The payload of the `done.state.<parent>` a final state raises: its `output:`
        fields (`statekit.compiler.model.done_payloads`)."""
        return {
            key: computed_value(f"output field '{key}'", expr, context, payload, active)
            for key, expr in segment.output
        }

    def timed(
        self,
        role: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> int | None:
        """A timer's delay or due time in milliseconds (`EvaluationError` when the
        expression fails or its value is not an integer); None: not known."""
        value = computed_value(role, expression, context, payload, active)
        if value.__class__ is not int:
            raise EvaluationError(role, expression, "the result is not an integer (milliseconds)")
        if not TIMER_MS_MIN <= value <= TIMER_MS_MAX:  # never stored: see TIMER_MS_MIN
            raise EvaluationError(
                role, expression, f"{value} ms is outside the timer range ±(2^63 - 1) ms"
            )
        return int(value)

    def instance_id(
        self,
        role: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> str:
        """The receiving instance's ID of a `send: {to: {chart, instance}}` (`EvaluationError`
        when the expression fails or its value is not a non-empty string)."""
        value = computed_value(role, expression, context, payload, active)
        if value.__class__ is not str or not value:
            raise EvaluationError(role, expression, "the instance ID is not a non-empty string")
        return str(value)

    def address(
        self,
        role: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> str | None:
        """The address a `send: {to: {address}}` computes: a string or None (null: it
        reaches nobody, `statekit.engine.addresses`)."""
        value = computed_value(role, expression, context, payload, active)
        return None if value is None else str(value)


class AbstractDomain(ValueDomain):
    """Evaluates nothing: a new `AbstractValue` per assignment, no outbox message, raised
    payloads with only their declared defaults."""

    __slots__ = ()

    @staticmethod
    def assigned(
        field: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> Any:
        """A new `AbstractValue`."""
        return AbstractValue()

    def emitted(
        self,
        effect: Emit,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> dict[str, Any] | None:
        """None: an abstract macrostep sends nothing."""
        return None

    def queued(
        self,
        effect: Raise | Send,
        defaults: Mapping[str, Any],
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> dict[str, Any]:
        """Only the declared payload defaults."""
        return dict(defaults)

    def done_payload(
        self,
        segment: EffectSegment,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> dict[str, Any]:
        """Nothing known: a `done:` transition's reads of the output are opaque."""
        return {}

    def timed(
        self,
        role: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> int | None:
        """None: an abstract timer has no known delay or due time."""
        return None

    def instance_id(
        self,
        role: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> str:
        """The expression's source: an abstract send's receiver is not known."""
        return expression.source

    def address(
        self,
        role: str,
        expression: Expression,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> str | None:
        """None: an abstract send's addressee is not known (some member, or nobody)."""
        return None


CONCRETE = ValueDomain()
"""The engine's domain: effects compute real values."""
ABSTRACT = AbstractDomain()
"""The analysis's domain: effects compute nothing (see the module docstring)."""

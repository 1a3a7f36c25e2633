"""Whether a chart reads `_event` (its name, type, origin or invokeid) anywhere: the engine
then evaluates its expressions with each event's `EventPayload`."""

from __future__ import annotations

from statekit.compiler.effect_walk import effect_conditions, leaf_effects
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.invocations import ToAddress, ToInstance
from statekit.compiler.ir import Assign, CompiledChart, Effect, Emit, Raise, Send, Transition


def reads_event_meta(chart: CompiledChart) -> bool:
    """Whether a guard, a condition or an effect of a transition, or an invocation's
    `finalize`, reads `_event.name`, `.type`, `.origin` or `.invokeid` (only they see
    the event)."""
    return any(e.reads_event_meta() for t in chart.transitions for e in _expressions(t)) or any(
        e.reads_event_meta() for i in chart.invocations for e in _of(i.finalize)
    )


def _expressions(transition: Transition) -> list[Expression]:
    found = [c.expression for c in transition.guards]
    found.extend(_of(transition.effects))
    return found


def _of(effects: tuple[Effect, ...]) -> list[Expression]:
    found = [c.expression for c in effect_conditions(effects)]
    for effect in leaf_effects(effects):
        if isinstance(effect, Assign):
            found.extend(e for _, e in effect.assignments)
        elif isinstance(effect, Emit | Raise | Send):
            found.extend(e for _, e in effect.payload)
        if isinstance(effect, Send):
            found.extend(e for e in (effect.delay, effect.at) if e is not None)
            if isinstance(effect.to, ToAddress):  # `to: {address: _event.origin}`
                found.append(effect.to.address)
            elif isinstance(effect.to, ToInstance):
                found.append(effect.to.instance)
    return found

"""Whether a chart reads `_event` (its name, type, origin, invokeid, sendid or origintype)
anywhere: the engine then evaluates its expressions with each event's `EventPayload`."""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.effect_walk import effect_conditions, leaf_effects
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.invocations import ToAddress, ToInstance
from statekit.compiler.ir import Assign, CompiledChart, Effect, Emit, Raise, Send


def reads_event_meta(chart: CompiledChart) -> bool:
    """Whether a guard, a condition or an effect of a transition, a state's entry or
    exit effect, or an invocation's `finalize` reads `_event.name`, `.type`, `.origin`,
    `.invokeid`, `.sendid` or `.origintype`."""
    return any(e.reads_event_meta() for e in _expressions(chart))


def _expressions(chart: CompiledChart) -> Iterator[Expression]:
    for transition in chart.transitions:
        yield from (c.expression for c in transition.guards)
        yield from _effect_expressions(transition.effects)
    for state in chart.states:
        yield from _effect_expressions(state.entry)
        yield from _effect_expressions(state.exit)
    for invocation in chart.invocations:
        yield from _effect_expressions(invocation.finalize)


def _effect_expressions(effects: tuple[Effect, ...]) -> Iterator[Expression]:
    yield from (c.expression for c in effect_conditions(effects))
    for effect in leaf_effects(effects):
        if isinstance(effect, Assign):
            yield from (e for _, e in effect.assignments)
        elif isinstance(effect, Emit | Raise | Send):
            yield from (e for _, e in effect.payload)
        if isinstance(effect, Send):
            yield from (e for e in (effect.delay, effect.at) if e is not None)
            if isinstance(effect.to, ToAddress):  # `to: {address: _event.origin}`
                yield effect.to.address
            elif isinstance(effect.to, ToInstance):
                yield effect.to.instance

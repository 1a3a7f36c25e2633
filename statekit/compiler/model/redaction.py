"""Which fields evidence must redact: the declared secrets and every value copied from one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.tree import ContextRef, EventRef, iter_nodes
from statekit.compiler.ir import (
    Assign,
    Effect,
    EventDecl,
    FieldDecl,
    Raise,
    RedactedFields,
    Send,
    StateNode,
    Transition,
)
from statekit.compiler.model.finalize_effects import events_from_child


def redacted_fields(
    context: Mapping[str, FieldDecl],
    events: Mapping[str, EventDecl],
    states: Sequence[StateNode],
    transitions: Sequence[Transition],
) -> RedactedFields:
    """Context fields and payload fields (per event) whose values evidence must redact.

    Declared `secret: true` fields, plus every field that an `assign` or a
    `raise` payload fills from a secret one, to a fixpoint: a secret copied
    into the context stays secret in later evidence and in `repr(state)`.
    """
    ctx = {n for n, f in context.items() if f.secret}
    payload = {name: {f.name for f in e.fields if f.secret} for name, e in events.items()}
    sites: list[tuple[str | None, Iterable[Effect]]] = [
        (t.event if t.event in events else None, t.effects) for t in transitions
    ]
    sites += [(None, (*s.entry, *s.exit)) for s in states]
    sites += [  # a finalize runs on each event that can come from its child
        (event.name, invocation.finalize)
        for s in states
        for invocation in s.invocations
        if invocation.finalize
        for event in events_from_child(invocation.id, events)
    ]
    changed = True
    while changed:
        changed = False
        for event, effects in sites:
            secret_event = payload.get(event, set()) if event is not None else set()
            for effect in leaf_effects(effects):
                pairs: tuple[tuple[str, Expression], ...] = ()
                if isinstance(effect, Assign):
                    pairs, target = effect.assignments, ctx
                elif isinstance(effect, Raise | Send):  # a sent payload is an event's too
                    pairs, target = effect.payload, payload.setdefault(effect.event, set())
                for name, expr in pairs:
                    reads_ctx, reads_event = _reads(expr)
                    if name not in target and (reads_ctx & ctx or reads_event & secret_event):
                        target.add(name)
                        changed = True
    return RedactedFields(
        context=frozenset(ctx),
        payload=MappingProxyType({name: frozenset(f) for name, f in payload.items()}),
    )


def _reads(expr: Expression) -> tuple[set[str], set[str]]:
    """The context fields and event fields an expression reads."""
    ctx: set[str] = set()
    event: set[str] = set()
    for node in iter_nodes(expr.tree):
        if isinstance(node, ContextRef):
            ctx.add(node.field)
        elif isinstance(node, EventRef):
            event.add(node.field)
    return ctx, event

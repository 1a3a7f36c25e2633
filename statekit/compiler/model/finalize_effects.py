"""An invocation's `finalize:` (SCXML's `<finalize>`): the parent's `assign` effects run on
every event from that child, before the parent's transitions select it.

The effects read the event the child sent. Which events a child sends is known from its
chart, which the compiler does not read (lint compares the charts), so `event.<field>`
in a finalize is typed over every event that can come from it: `done.invoke.<id>`,
`error.invoke.<id>` and each event of the chart's `events:` (a child's `send: {to:
parent}` names one of them). A field is the type those events give it, nullable unless
every one of them has it (an event without the field reads null there); a field two
events give different types is not readable (an `expression-type` error says so).

Only `assign` (and `if` around it) may be written: a finalize updates the parent's
context from what the child says, and everything that acts outward (`emit`, `raise`,
`send`, timers) belongs on the transitions, which the analysis explores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.invocations import (
    DONE_INVOKE_PREFIX,
    ERROR_INVOKE_PREFIX,
    Invocation,
    done_event,
    error_event,
)
from statekit.compiler.ir import Assign, EventDecl, FieldDecl
from statekit.compiler.model.effect_compiler import EffectCompiler
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import Node
from statekit.compiler.value_types import ValueType

ERROR_EXECUTION = "error.execution"


def events_from_child(invoke_id: str, events: Mapping[str, EventDecl]) -> tuple[EventDecl, ...]:
    """The events of the chart that can come from the child of `invoke_id`: its own
    `done.invoke`/`error.invoke` and every event of `events:` (in declaration order)."""
    own = (done_event(invoke_id), error_event(invoke_id))
    family = (DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX)
    out = [
        decl
        for name, decl in events.items()
        if name != ERROR_EXECUTION and not name.startswith(family)
    ]
    out.extend(events[name] for name in own if name in events)
    return tuple(out)


def finalize_event(invoke_id: str, events: Mapping[str, EventDecl], span: SourceSpan) -> EventDecl:
    """The event a finalize of `invoke_id` reads: each field of the events that can come
    from the child, of the one type they give it (nullable unless all have it)."""
    candidates = events_from_child(invoke_id, events)
    types: dict[str, ValueType | None] = {}
    seen: dict[str, int] = {}
    for decl in candidates:
        for f in decl.fields:
            kind = dataclasses.replace(f.type, nullable=False)
            if f.name not in types:
                types[f.name] = kind
            elif types[f.name] != kind:
                types[f.name] = None  # two types: not readable
            seen[f.name] = seen.get(f.name, 0) + 1
    fields = tuple(
        FieldDecl(
            name=name,
            type=dataclasses.replace(kind, nullable=True) if seen[name] < len(candidates) else kind,
            default=None,
            has_default=False,
            secret=False,
            description=None,
            span=span,
        )
        for name, kind in types.items()
        if kind is not None
    )
    return EventDecl(name=f"an event from invoke '{invoke_id}'", fields=fields, span=span)


def with_finalize(
    invocation: Invocation,
    node: Node | None,
    effects: EffectCompiler,
    events: Mapping[str, EventDecl],
    problems: list[Diagnostic],
) -> Invocation:
    """`invocation` with its `finalize:` list (`node`) compiled, or unchanged without one."""
    if node is None:
        return invocation
    event = finalize_event(invocation.id, events, node.span)
    scope = effects.scope(event, "")
    compiled = effects.compile_list(node, scope)
    problems.extend(compiled.problems)
    for effect in leaf_effects(compiled.effects):
        if not isinstance(effect, Assign):
            problems.append(
                Diagnostic(
                    slug=schema_rule.SLUG,
                    severity=Severity.ERROR,
                    message=f"the finalize of invoke '{invocation.id}' may only assign the context",
                    span=effect.span,
                    notes=(
                        "a finalize updates this chart's context from what the child sent, "
                        "before the transitions choose: emit, raise, send and timers belong "
                        "on the transition that handles the event",
                    ),
                )
            )
    return dataclasses.replace(
        invocation,
        finalize=compiled.effects,
        finalize_fields=tuple(f.name for f in event.fields),
    )

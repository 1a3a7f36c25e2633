"""The chart's `producers:` and `races:` compiled: who sends which events, and decided races.

Neither changes how an event is answered: they tell the race analysis
(`statekit.analysis.races`) which pairs of events can arrive in either
order and which of those races the author has decided. A producer naming an
undeclared event is an `unknown-event` error. A race entry is kept as
written even when it names an unknown event or state (resolved to None):
the `stale-race-decision` rule reports it with its position, so a chart
still compiles while its events are being renamed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from statekit.compiler.diagnostics import Diagnostic, SourceSpan
from statekit.compiler.ir import EventDecl, Producer, RaceDecision
from statekit.compiler.model.declarations import mapping_items, scalar_list, text
from statekit.compiler.source.nodes import MappingNode, Node

ResolveState = Callable[[str, SourceSpan], int | Diagnostic]
"""Resolves a state reference, or gives the diagnostic that says why it fails."""
ReportUnknownEvent = Callable[[str, SourceSpan], None]


def compile_producers(
    node: Node | None, events: Mapping[str, EventDecl], unknown_event: ReportUnknownEvent
) -> tuple[Producer, ...]:
    """Every producer in declaration order; each undeclared event it names is reported."""
    out: list[Producer] = []
    for key, spec in mapping_items(node):
        names: list[str] = []
        for ref in scalar_list(spec):
            name = str(ref.value)
            if name not in events:
                unknown_event(name, ref.span)
            names.append(name)
        out.append(Producer(name=str(key.value), events=tuple(names), span=key.span))
    return tuple(out)


def compile_races(node: Node | None, resolve_state: ResolveState) -> tuple[RaceDecision, ...]:
    """Every race entry the schema admitted, in declaration order, its `in:` resolved
    where it names a state."""
    out: list[RaceDecision] = []
    for key, spec in mapping_items(node):
        if not isinstance(spec, MappingNode):
            continue  # the schema admits only race mappings
        refs = scalar_list(spec.get("events"))
        if len(refs) != 2:
            continue  # the schema admits exactly two
        where = spec.get("in")
        state_ref = text(where)
        state: int | None = None
        if state_ref is not None and where is not None:
            found = resolve_state(state_ref, where.span)
            state = found if isinstance(found, int) else None
        out.append(
            RaceDecision(
                name=str(key.value),
                events=(str(refs[0].value), str(refs[1].value)),
                decision=text(spec.get("decision")) or "",
                state_ref=state_ref,
                state=state,
                span=key.span,
                event_spans=(refs[0].span, refs[1].span),
                state_span=where.span if where is not None else None,
            )
        )
    return tuple(out)

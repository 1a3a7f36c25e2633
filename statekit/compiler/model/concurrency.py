"""The chart's `producers:` and `races:` compiled: who sends which events, decided races
and ordering facts.

None of them changes how an event is answered: they tell the race analysis
(`statekit.analysis.race_decisions`) which pairs of events can arrive in
either order and which of those races the author has decided. Each side of a
`races:` entry is an event's name, a list of names or `"*"` (any event).

An undeclared event named by a producer, in a list, or in an ordering fact
(`precedes`) is an `unknown-event` error. A race entry's side written as one
name is kept as written even when it names an unknown event, and an `in:` that
names no state is resolved to None: the `stale-race-decision` rule reports them
with their position, so a chart still compiles while its events are being
renamed. What the schema cannot say is a `schema` error here: a producer that is
`unordered: true` without a `decision:` (or has a `decision:` without being
unordered), `"*"` on both sides, one event named on both sides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import EventDecl, Producer, RaceDecision
from statekit.compiler.model.declarations import mapping_items, scalar_list, text
from statekit.compiler.race_ir import ANY_EVENT, RaceSide
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.rules import unknown_event
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode

ResolveState = Callable[[str, SourceSpan], int | Diagnostic]
"""Resolves a state reference, or gives the diagnostic that says why it fails."""
ReportUnknownEvent = Callable[[str, SourceSpan], None]
TIMER_EVENT = re.compile(r"(after|at)\(.+\)@\S*")
"""A timer event's name, as the schema's `timerEventName` has it."""


def compile_producers(
    node: Node | None,
    events: Mapping[str, EventDecl],
    unknown_event: ReportUnknownEvent,
    problems: list[Diagnostic],
) -> tuple[Producer, ...]:
    """Every producer in declaration order; each undeclared event it names is reported,
    and so is an `unordered` flag without a `decision` (or the reverse), in `problems`."""
    out: list[Producer] = []
    for key, spec in mapping_items(node):
        name = str(key.value)
        listed = spec.get("events") if isinstance(spec, MappingNode) else spec
        names: list[str] = []
        for ref in scalar_list(listed):
            event = str(ref.value)
            if TIMER_EVENT.fullmatch(event):
                problems.append(_timer_under_producer(name, event, ref.span))
                continue
            if event not in events:
                unknown_event(event, ref.span)
            names.append(event)
        unordered, decision = False, None
        if isinstance(spec, MappingNode):
            flag = spec.get("unordered")
            unordered = isinstance(flag, ScalarNode) and flag.value is True
            decision = text(spec.get("decision"))
            if unordered and decision is None:
                problems.append(
                    _error(
                        f"producer '{name}' is `unordered: true` without a `decision:`",
                        spec.key_node("unordered") or key,
                        "say how a race among its events is decided (`decision: each "
                        "webhook is made idempotent by already`)",
                    )
                )
            elif decision is not None and not unordered:
                problems.append(
                    _error(
                        f"producer '{name}' has a `decision:` but is not `unordered: true`: "
                        "its events arrive in the order it sends them and never race",
                        spec.key_node("decision") or key,
                        "add `unordered: true` if they arrive in any order, else remove "
                        "`decision:`",
                    )
                )
        out.append(
            Producer(
                name=name,
                events=tuple(names),
                span=key.span,
                unordered=unordered,
                decision=decision,
            )
        )
    return tuple(out)


def compile_races(
    node: Node | None,
    resolve_state: ResolveState,
    events: Mapping[str, EventDecl],
    timers: Collection[str],
    problems: list[Diagnostic],
) -> tuple[RaceDecision, ...]:
    """Every race entry the schema admitted, in declaration order, its `in:` resolved where
    it names a state. `timers` are the chart's timer events' names."""
    out: list[RaceDecision] = []
    for key, spec in mapping_items(node):
        if not isinstance(spec, MappingNode):
            continue  # the schema admits only race mappings
        name = str(key.value)
        precedes = spec.get("precedes") is not None
        pair = spec.get("precedes") if precedes else spec.get("events")
        if not isinstance(pair, SequenceNode) or len(pair.items) != 2:
            continue  # the schema admits exactly two sides
        sides = (_side(pair.items[0]), _side(pair.items[1]))
        for side in sides:
            for event, span in zip(side.events, side.spans, strict=True):
                strict = precedes or side.listed  # a lone name is left to the lint rule
                if strict and event not in events and event not in timers:
                    problems.append(_unknown_race_event(event, span, events, timers))
        problem = _pair_problem(name, "precedes" if precedes else "events", sides, pair)
        if problem is not None:
            problems.append(problem)
        where = spec.get("in")
        state_ref = text(where)
        state: int | None = None
        if state_ref is not None and where is not None:
            found = resolve_state(state_ref, where.span)
            state = found if isinstance(found, int) else None
        out.append(
            RaceDecision(
                name=name,
                sides=sides,
                decision=text(spec.get("decision")) or "",
                state_ref=state_ref,
                state=state,
                span=key.span,
                state_span=where.span if where is not None else None,
                precedes=precedes,
            )
        )
    return tuple(out)


def _side(node: Node) -> RaceSide:
    """One side as written: a name, `"*"`, or a list of names."""
    if isinstance(node, SequenceNode):
        refs = scalar_list(node)
        return RaceSide(
            events=tuple(str(r.value) for r in refs),
            spans=tuple(r.span for r in refs),
            span=node.span,
            listed=True,
        )
    name = str(node.value) if isinstance(node, ScalarNode) else ""  # the schema admits names
    if name == ANY_EVENT:
        return RaceSide(events=(), spans=(), span=node.span)
    return RaceSide(events=(name,), spans=(node.span,), span=node.span)


def _pair_problem(
    name: str, key: str, sides: tuple[RaceSide, RaceSide], pair: SequenceNode
) -> Diagnostic | None:
    """`"*"` on both sides, or one event named alone on both sides."""
    first, second = sides
    if first.any and second.any:
        return _error(
            f"race '{name}' has \"*\" on both sides of `{key}`: it would cover every pair "
            "of events",
            pair,
            "name the event (or list the events) of one side",
        )
    if not first.listed and not second.listed and first.events == second.events:
        return _error(f"'{key}' lists {first.events[0]!r} more than once", pair)
    return None


def _unknown_race_event(
    event: str, span: SourceSpan, events: Collection[str], timers: Collection[str]
) -> Diagnostic:
    """An undeclared event in a list or an ordering fact; a timer event's name is looked up
    among the chart's timers."""
    if TIMER_EVENT.fullmatch(event):
        note = f"the chart's timer events: {', '.join(timers) or 'none'}"
        message = f"no timer event '{event}' in this chart"
    else:
        note = f"declare it under events: (declared: {', '.join(events) or 'none'})"
        message = f"undeclared event '{event}'"
    return Diagnostic(unknown_event.SLUG, Severity.ERROR, message, span, (note,))


def _timer_under_producer(producer: str, event: str, span: SourceSpan) -> Diagnostic:
    """A timer event listed under a producer: the clock sends timers, and they race with
    every producer's events without an entry."""
    return Diagnostic(
        unknown_event.SLUG,
        Severity.ERROR,
        f"producer '{producer}' lists the timer event '{event}': timers are sent by the clock",
        span,
        (
            "remove it: a timer event needs no producer, it races with the events of "
            "every producer where it is armed (decide such a race under races:)",
        ),
    )


def _error(message: str, node: Node, *notes: str) -> Diagnostic:
    return Diagnostic(schema_rule.SLUG, Severity.ERROR, message, node.span, notes)

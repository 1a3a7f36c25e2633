"""invoke-unclassified: an event a child can send its parent, unclassified where it can arrive.

While a state's invocation is active, its child can answer the parent with
`done.invoke.<id>` (it reached a top-level final state), `error.invoke.<id>`
(it could not start, or failed) and each event the child sends with
`send: {to: parent}`. Each of them must have a deliberate outcome in every
reachable configuration where the invoking state is active: a transition,
an `already` entry or a `reject` entry, as `undefined-pair` asks of every
event (which leaves `done.invoke.<id>` and `error.invoke.<id>` to this rule:
they cannot arrive where the invocation is not active). An event the child
sends that the parent does not declare at all is reported here too. The
child's sends are known when its chart is linted together with the parent.

One finding per event and invocation, on the smallest state active in all
the configurations where it is unclassified (a `reject` entry there
classifies them all), with the count, a few examples, a path, and the
child's `send` as a related place.

Failing::

    states:
      paying:
        invoke: {id: payment, chart: payment, output: {ref: string}}
        on: {done.invoke.payment: shipping}     # error.invoke.payment: undefined

Passing::

    states:
      paying:
        invoke: {id: payment, chart: payment, output: {ref: string}}
        on: {done.invoke.payment: shipping, error.invoke.payment: failed}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.report import leaves, state_name
from statekit.analysis.static import mentioned_events
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.chart_set import SENT, ChildEvent, InvokedChart, child_events
from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import Configuration
from statekit.lint.family_checks import FamilyView
from statekit.lint.forwarded_events import undeclared_forwards

SLUG = "invoke-unclassified"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"

EXAMPLES = 3
"""How many example configurations a finding lists."""


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per event a child can send and invocation (see the module docstring)."""
    wildcard = any(c.event == "*" for s in chart.states for c in s.reject + s.already)
    reported_elsewhere = frozenset(chart.events) if wildcard else mentioned_events(chart)
    asked: set[tuple[str, str]] = set()  # a chosen chart's cases share done/error
    for invoked in family.chart_set.invoked(chart):
        yield from undeclared_forwards(SLUG, invoked)
        for sent in child_events(invoked):
            mark = (invoked.invocation.id, sent.event)
            if sent.kind != SENT and mark in asked:
                continue
            asked.add(mark)
            if sent.event not in chart.events:
                yield _undeclared(chart, invoked, sent)
            elif sent.kind != SENT or sent.event not in reported_elsewhere:
                # undefined-pair asks about a mentioned event everywhere already
                found = _unclassified(chart, family, invoked, sent)
                if found is not None:
                    yield found


def _source(invoked: InvokedChart) -> str:
    child = invoked.chart_name
    return f"invoke '{invoked.invocation.id}' (chart '{child}')"


def _undeclared(chart: CompiledChart, invoked: InvokedChart, sent: ChildEvent) -> Diagnostic:
    return Diagnostic(
        SLUG,
        DEFAULT_SEVERITY,
        f"event {sent.event}, which {_source(invoked)} sends to its parent, is not declared "
        f"in chart '{chart.name}'",
        invoked.invocation.span,
        (
            f"the child's send is at {sent.span}",
            f"declare {sent.event} under `events:` with the payload the child sends, and "
            "classify it where the invocation is active",
        ),
        (RelatedLocation(sent.span, f"send of {sent.event} to the parent"),),
    )


def _unclassified(
    chart: CompiledChart, family: FamilyView, invoked: InvokedChart, sent: ChildEvent
) -> Diagnostic | None:
    invoking = invoked.invocation.state
    where: dict[Configuration, int] = {}
    for node in family.facts.exploration.nodes:
        if invoking not in node.config.ids:
            continue
        for outcome in node.outcomes or ():
            if outcome.event == sent.event and outcome.basis == "undefined":
                where.setdefault(node.config, node.id)
    if not where:
        return None
    members = list(where)
    common = frozenset.intersection(*(c.ids for c in members))
    place = invoking
    while True:
        below = [c for c in chart.states[place].children if c in common]
        if len(below) != 1:
            break
        place = below[0]
    name = state_name(chart, place)
    examples = [f"  {leaves(chart, c)}" for c in members[:EXAMPLES]]
    if len(members) > EXAMPLES:
        examples.append(f"  ... and {len(members) - EXAMPLES} more")
    trace = checked_trace(family.facts.replays, where[members[0]])
    origin = {
        "done": "when the child reaches a top-level final state",
        "error": "when the child cannot start or fails",
        SENT: f"by the child's send at {sent.span}",
    }[sent.kind]
    notes = (
        f"UNDEFINED_TRANSITION in {len(members)} reachable configuration(s) with "
        f"'{state_name(chart, invoking)}' (and its invocation) active, for example in:",
        *examples,
        *trace_notes(trace),
        f"{sent.event} comes from {_source(invoked)} {origin}",
        f"classify it at '{name}': `reject: {{{sent.event}: REASON}}` there answers in all "
        f"of these configurations whenever no transition or `already` does; or a transition "
        f"on {sent.event}",
    )
    message = (
        f"event {sent.event} is not classified under '{name}': no transition, `already` or "
        f"`reject` answers it there (UNDEFINED_TRANSITION)"
    )
    related = (
        (RelatedLocation(sent.span, f"send of {sent.event} to the parent"),)
        if sent.kind == SENT
        else ()
    )
    return Diagnostic(
        SLUG, DEFAULT_SEVERITY, message, chart.states[place].span, notes, related, trace
    )

"""send-event: a `send` to another chart's instance whose event that chart does not take.

A `send` with `to:` delivers its event to another instance: an invoked child
(`to: <invoke id>`), the parent (`to: parent`) or an instance of a named chart
(`to: {chart, instance}`). The event and its payload belong to the receiving
chart, so the compiler of the sending chart cannot check them: this rule does,
across the charts linted together. The receiver must declare the event (else
it refuses it as unknown; an undeclared event sent to the parent is
`invoke-unclassified`'s finding, at the parent), and the payload must fit the
declaration: every field declared, every required field given, each value of
its field's type. The finding sits on the send's event, or on the payload
field.

Failing::

    # payment.yaml declares `events: {REFUND: {amount: integer}}`
    - send: {event: REFUND, to: payment, payload: {amount: ctx.reason}}   # a string

Passing::

    - send: {event: REFUND, to: payment, payload: {amount: ctx.total}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.chart_set import chart_effects
from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity, SourceSpan
from statekit.compiler.expressions.type_relations import assign_problem
from statekit.compiler.invocations import ToChild, ToInstance, ToParent
from statekit.compiler.ir import CompiledChart, Send
from statekit.lint.family_checks import FamilyView

SLUG = "send-event"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"


def _receivers(
    chart: CompiledChart, send: Send, family: FamilyView
) -> list[tuple[str, CompiledChart]]:
    """(how the receiver is named, its chart) for each chart of the set the send reaches."""
    charts, target = family.chart_set, send.to
    if isinstance(target, ToChild):
        inv = chart.invocation(target.invoke_id)
        children = [charts.resolve(n, inv.version, chart.file) for n in inv.charts] if inv else []
        return [
            (f"invoke '{target.invoke_id}' (chart '{child.name}')", child)
            for child in children
            if child is not None
        ]
    if isinstance(target, ToInstance):
        found = charts.resolve(target.chart, near=chart.file)
        return [(f"chart '{found.name}'", found)] if found is not None else []
    if isinstance(target, ToParent):
        return [(f"the parent (chart '{i.parent.name}')", i.parent) for i in charts.invokers(chart)]
    return []


def _event_span(send: Send, family: FamilyView) -> SourceSpan:
    """The span of the send's `event:` value (the effect is `{send: {event: ...}}`)."""
    return family.key_span(send.span, "send", "event")


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per send and receiving chart that disagree (see the module docstring)."""
    for send in (e for e in chart_effects(chart) if isinstance(e, Send) and e.to is not None):
        for named, receiver in _receivers(chart, send, family):
            declared = receiver.events.get(send.event)
            if declared is None:
                if not isinstance(send.to, ToParent):  # invoke-unclassified's, at the parent
                    yield Diagnostic(
                        SLUG,
                        DEFAULT_SEVERITY,
                        f"send of {send.event} to {named}: that chart does not declare "
                        f"{send.event}",
                        _event_span(send, family),
                        (
                            f"the events of chart '{receiver.name}': "
                            + (", ".join(sorted(receiver.events)[:12]) or "none"),
                        ),
                    )
                continue
            fields = {f.name: f for f in declared.fields}
            given = dict(send.payload)
            payload_span = family.key_span(send.span, "send", "payload")
            for name, value in send.payload:
                spec = fields.get(name)
                if spec is None:
                    yield Diagnostic(
                        SLUG,
                        DEFAULT_SEVERITY,
                        f"send of {send.event} to {named}: payload field '{name}' is not "
                        f"declared for {send.event} there",
                        family.key_name_span(payload_span, name),
                        (f"{send.event} is declared at {declared.span}",),
                        (RelatedLocation(declared.span, f"{send.event} in '{receiver.name}'"),),
                    )
                elif (problem := assign_problem(value.tree, spec.type)) is not None:
                    yield Diagnostic(
                        SLUG,
                        DEFAULT_SEVERITY,
                        f"send of {send.event} to {named}: payload field '{name}': {problem}",
                        value.span,
                        (f"the field is declared at {spec.span}",),
                        (RelatedLocation(spec.span, f"field '{name}' of {send.event}"),),
                    )
            missing = [f.name for f in declared.fields if not f.has_default and f.name not in given]
            if missing:
                yield Diagnostic(
                    SLUG,
                    DEFAULT_SEVERITY,
                    f"send of {send.event} to {named} does not give the required payload "
                    f"field(s) {', '.join(missing)}",
                    _event_span(send, family),
                    (f"{send.event} is declared at {declared.span}",),
                    (RelatedLocation(declared.span, f"{send.event} in '{receiver.name}'"),),
                )

"""send-unknown-target: a `send: {to: {chart: X, instance: ...}}` naming no chart of the set.

A message to another instance names the receiver's chart by its `statechart:`
name; the receiving instance's ID is an expression, known only at run time,
but its chart must exist. The chart set is the charts linted together (see
`invoke-unknown-chart`). The finding sits on the target's `chart:` value.

Failing::

    # order.yaml, linted with payment.yaml
    entry:
      - send: {event: RefundRequested, to: {chart: payments, instance: ctx.payment_id}}

Passing::

    entry:
      - send: {event: RefundRequested, to: {chart: payment, instance: ctx.payment_id}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.chart_set import sends_to_charts
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.lint.family_checks import FamilyView

SLUG = "send-unknown-target"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per `send` to a chart the set does not have."""
    charts = family.chart_set
    for send, target in sends_to_charts(chart):
        if charts.resolve(target.chart, near=chart.file) is not None:
            continue
        notes: list[str] = []
        closest = charts.closest_name(target.chart)
        if closest is not None:
            notes.append(f"did you mean '{closest}'?")
        known = ", ".join(f"'{n}'" for n in charts.names[:8]) or "none"
        notes.append(f"the charts linted together: {known}")
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"send of {send.event} goes to chart '{target.chart}', which is not among the "
            "charts linted with this one",
            family.key_span(target.span, "chart"),
            tuple(notes),
        )

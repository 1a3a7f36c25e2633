"""invoke-unknown-chart: an invoke whose `chart:` (and `version:`) names no chart of the set.

The chart set is the charts linted together: the files and folders given to
`statekit lint`, and the charts in the folder of each file named alone (in an
editor, the charts in the file's folder). An invoke names its child by the
child's `statechart:` name and, with `version:`, one version of it; without
a version it means the newest version in the set. A name of no chart is
usually a typo (the finding says which name is closest) or a child chart
kept elsewhere: lint it together with the parent. The finding sits on the
invoke's `chart:` value.

Failing::

    # order.yaml, linted alone or with payment.yaml
    states:
      paying:
        invoke: {id: payment, chart: paymnet}

Passing::

    states:
      paying:
        invoke: {id: payment, chart: payment}   # payment.yaml: `statechart: payment`
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.lint.family_checks import FamilyView

SLUG = "invoke-unknown-chart"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per invoke whose chart (at its version) is not in the set."""
    charts = family.chart_set
    for invoked in charts.invoked(chart):
        if invoked.child is not None:
            continue
        inv, name = invoked.invocation, invoked.chart_name
        span = family.key_span(inv.span, "chart")
        case = next((c for c in inv.choice.cases if c.chart == name), None) if inv.choice else None
        if case is not None:  # a case of `chart: {by, cases}`: at its key
            span = case.span
        versions = charts.versions(name)
        if versions:
            listed = ", ".join(str(v) for v in versions)
            yield Diagnostic(
                SLUG,
                DEFAULT_SEVERITY,
                f"invoke '{inv.id}' names version {inv.version} of chart '{name}', which "
                f"the charts linted with this one do not have (they have version {listed})",
                family.key_span(inv.span, "version"),
                (f"pin a version the set has, or lint the file of version {inv.version} too",),
            )
            continue
        notes: list[str] = []
        closest = charts.closest_name(name)
        if closest is not None:
            notes.append(f"did you mean '{closest}'?")
        known = ", ".join(f"'{n}'" for n in charts.names[:8]) or "none"
        notes.append(f"the charts linted together: {known}")
        notes.append("lint the child's file with this one (`statekit lint FOLDER` or both files)")
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"invoke '{inv.id}' names chart '{name}'"
            + ("" if case is None else f" (case {case.value!r})")
            + ", which is not among the charts linted with this one",
            span,
            tuple(notes),
        )

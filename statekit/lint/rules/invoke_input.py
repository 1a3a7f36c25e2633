"""invoke-input: an invoke's `input:` that the child chart's context does not take.

Each `input:` key names a context field of the child chart, and its
expression (over the parent's context) must have that field's type: the
child starts with those values and its other fields at their defaults.
Every context field has a default, so no input is required; the check is
that each one given lands in a field of its type. A key naming no field of
the child, or a value of another type (a string for an integer, a nullable
value for a field that is not nullable, a value outside an enum), is found
here instead of refusing the child's start at run time (`error.invoke.<id>`).
The finding sits on the input's key when the child has no such field, else
on its value.

Failing::

    # payment.yaml: context: {amount: integer, order_id: string}
    invoke:
      id: payment
      chart: payment
      input: {order_id: ctx.order_id, amout: ctx.total}     # no field amout

Passing::

    invoke:
      id: payment
      chart: payment
      input: {order_id: ctx.order_id, amount: ctx.total}    # ctx.total: integer
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity
from statekit.compiler.expressions.type_relations import assign_problem
from statekit.compiler.ir import CompiledChart
from statekit.lint.family_checks import FamilyView

SLUG = "invoke-input"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per input of an invoke that its child chart does not take."""
    for invoked in family.chart_set.invoked(chart):
        child, inv = invoked.child, invoked.invocation
        if child is None:
            continue  # invoke-unknown-chart's finding
        for name, expression in inv.input:
            declared = child.context.get(name)
            if declared is None:
                close = difflib.get_close_matches(name, list(child.context), n=1)
                fields = ", ".join(sorted(child.context)) or "none"
                notes = [f"did you mean '{close[0]}'?"] if close else []
                notes.append(f"the context fields of chart '{child.name}': {fields}")
                yield Diagnostic(
                    SLUG,
                    DEFAULT_SEVERITY,
                    f"input '{name}' of invoke '{inv.id}' names no context field of chart "
                    f"'{child.name}' (version {child.version})",
                    family.key_name_span(family.key_span(inv.span, "input"), name),
                    tuple(notes),
                )
                continue
            problem = assign_problem(expression.tree, declared.type)
            if problem is None:
                continue
            yield Diagnostic(
                SLUG,
                DEFAULT_SEVERITY,
                f"input '{name}' of invoke '{inv.id}' does not fit the context field "
                f"'{name}' of chart '{child.name}': {problem}",
                expression.span,
                (
                    f"the field is declared at {declared.span}",
                    f"give it a value of type {declared.type.describe()}, or change the "
                    "child's field",
                ),
                (RelatedLocation(declared.span, f"context field '{name}' of '{child.name}'"),),
            )

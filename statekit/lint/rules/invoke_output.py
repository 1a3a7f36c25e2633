"""invoke-output: an invoke's `output:` that the child chart's final states do not give.

The payload of `done.invoke.<id>` is what the child's top-level final state
gives in its `output:` (SCXML's `<donedata>`), typed by the invoke's
`output:` field specs. Every top-level final state of the child must give
each field the parent declares without a default, with a value of its type,
and no field the parent does not declare (an unknown payload field is
refused, as for any event). The finding sits on the parent's field (or on
the invoke's `output:` for a field only the child gives) and names the
child's final state as a related place.

Failing::

    # payment.yaml: paid: {final: true, output: {ref: ctx.attempts}}   # an integer
    invoke:
      id: payment
      chart: payment
      output: {ref: string}

Passing::

    # payment.yaml: paid: {final: true, output: {ref: ctx.reference}}  # a string
    invoke: {id: payment, chart: payment, output: {ref: string}}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity, SourceSpan
from statekit.compiler.expressions.type_relations import assign_problem
from statekit.compiler.ir import CompiledChart, FieldDecl, StateKind
from statekit.lint.family_checks import FamilyView

SLUG = "invoke-output"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "family"


def check(chart: CompiledChart, family: FamilyView) -> Iterator[Diagnostic]:
    """One finding per output field and final state of the child that disagree."""
    for invoked in family.chart_set.invoked(chart):
        child, inv = invoked.child, invoked.invocation
        if child is None:
            continue  # invoke-unknown-chart's finding
        done = chart.events.get(inv.done_event)
        fields = done.fields if done is not None else ()
        output = family.key_span(inv.span, "output") if fields else inv.span
        yield from disagreements(inv.id, fields, output, child)


def disagreements(
    invoke_id: str, fields: Sequence[FieldDecl], output: SourceSpan, child: CompiledChart
) -> Iterator[Diagnostic]:
    """The findings of invoke `invoke_id`, whose `output:` declares `fields` (at `output`,
    or the invoke's own span when it declares none), against its child chart."""
    expected = {f.name: f for f in fields}
    finals = [s for s in child.states if s.parent == 0 and s.kind is StateKind.FINAL]
    of_child = f"of chart '{child.name}'"
    for final in finals:
        given = dict(final.output)
        here = RelatedLocation(final.span, f"final state '{final.path}' of '{child.name}'")
        for name, spec in expected.items():
            value = given.get(name)
            if value is None:
                if spec.has_default:
                    continue
                yield Diagnostic(
                    SLUG,
                    DEFAULT_SEVERITY,
                    f"output '{name}' of invoke '{invoke_id}' is not given by the final "
                    f"state '{final.path}' {of_child}",
                    spec.span,
                    (
                        f"the final state is at {final.span}",
                        f"add `output: {{{name}: ...}}` there, or give the field a default",
                    ),
                    (here,),
                )
                continue
            problem = assign_problem(value.tree, spec.type)
            if problem is not None:
                yield Diagnostic(
                    SLUG,
                    DEFAULT_SEVERITY,
                    f"output '{name}' of invoke '{invoke_id}' does not fit what the final "
                    f"state '{final.path}' {of_child} gives: {problem}",
                    spec.span,
                    (f"the value is at {value.span}",),
                    (RelatedLocation(value.span, f"output '{name}' of '{final.path}'"),),
                )
        for name, value in final.output:
            if name in expected:
                continue
            yield Diagnostic(
                SLUG,
                DEFAULT_SEVERITY,
                f"the final state '{final.path}' {of_child} gives output '{name}', which "
                f"invoke '{invoke_id}' does not declare (its done.invoke.{invoke_id} would be "
                "refused: an unknown payload field)",
                output,
                (
                    f"the value is at {value.span}",
                    f"declare it in the invoke's `output:` ({name}: "
                    f"{value.type.describe()}), or drop it from the child",
                ),
                (RelatedLocation(value.span, f"output '{name}' of '{final.path}'"),),
            )

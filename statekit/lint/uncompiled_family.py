"""The family finding behind a compile error: an invoke's `output:` checked on a chart that
does not compile.

A parent that declares `output: {ref: integer}` for a child whose final state gives a
string, and assigns `event.ref` of `done.invoke.<id>` to a string field, fails to
compile at the assign (`expression-type`); the family rules, which read compiled
charts, would then say nothing, and the author would fix the assign instead of the
cause. So when a chart does not compile but its text is schema-valid, its invokes
are read as the compiler's first step reads them (`declare_invocations`: id, chart,
version and the `output:` field specs) and `invoke-output` checks them against the
children of the chart set; each finding says that the compile error may follow from it.
"""

from __future__ import annotations

from collections.abc import Callable

from statekit.compiler.chart_set import ChartSet
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.model.chart_choice import case_charts
from statekit.compiler.model.declarations import text
from statekit.compiler.model.invocation_reader import declare_invocations
from statekit.compiler.model.numbering import number_states
from statekit.compiler.pipeline import CompileResult
from statekit.compiler.schema import validator
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, Node
from statekit.lint.family_checks import key_span_in
from statekit.lint.rules import invoke_output

UNCOMPILED_NOTE = (
    "the chart does not compile: an error where it uses the payload of done.invoke.{invoke} "
    "(event.FIELD in an assign or a guard) may follow from this one; fix this first"
)


def output_findings(
    result: CompileResult, file: str, chart_set: ChartSet | Callable[[], ChartSet]
) -> list[Diagnostic]:
    """`invoke-output`'s findings for the chart of `result`, which did not compile (none
    when its text is not schema-valid, or names no child of `chart_set`; a callable is
    asked for the set only when the chart invokes)."""
    if result.chart is not None or result.source is None:
        return []
    root, problems = load_yaml(result.source, file)
    if not isinstance(root, MappingNode) or any(p.severity is Severity.ERROR for p in problems):
        return []
    if validator.validate(root, file):
        return []
    numbered = number_states(root, text(root.get("statechart")) or "chart")
    declared = declare_invocations(numbered.drafts, [])
    if not declared.invocations:
        return []
    if not isinstance(chart_set, ChartSet):
        chart_set = chart_set()
    tree: Node = root
    found: list[Diagnostic] = []
    pairs = [
        (inv, name)
        for inv in declared.invocations
        for name in (case_charts(inv.choice) if inv.choice is not None else (inv.chart,))
    ]
    for inv, name in pairs:
        child = chart_set.resolve(name, inv.version, file)
        if child is None:
            continue
        fields = declared.events[f"done.invoke.{inv.id}"].fields
        output = key_span_in(tree, inv.span, "output") if fields else inv.span
        for finding in invoke_output.disagreements(inv.id, fields, output, child):
            note = UNCOMPILED_NOTE.format(invoke=inv.id)
            found.append(
                Diagnostic(
                    finding.slug,
                    finding.severity,
                    finding.message,
                    finding.span,
                    (*finding.notes, note),
                    finding.related,
                )
            )
    return found

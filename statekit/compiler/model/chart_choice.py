"""Reading `invoke: {chart: {by, cases}}`: the child's chart chosen by an expression.

`by` is compiled over the chart's `ctx` without an event (it is evaluated when the
child starts, with the invocation's input); its type must be a string, an integer or
a boolean (nullable: null matches no case). Each case's key must be a value of that
type (of its enum, when it has one), and no value may have two cases. Whether each
case's chart exists, and takes the input and gives the output the invocation names,
is checked across charts by lint (`statekit.lint.rules.invoke_unknown_chart`, ...).
"""

from __future__ import annotations

import re

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import compile_expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.invocations import ChartCase, ChartChoice
from statekit.compiler.model.declarations import mapping_items, text
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.compiler.value_types import BaseType, ValueType

CHOOSABLE = (BaseType.STRING, BaseType.INTEGER, BaseType.BOOLEAN)
"""The types whose values can name a case."""


def _error(message: str, span: SourceSpan, *notes: str) -> Diagnostic:
    return Diagnostic(
        slug=schema_rule.SLUG, severity=Severity.ERROR, message=message, span=span, notes=notes
    )


def is_choice(node: object) -> bool:
    """Whether an invoke's `chart:` node is `{by, cases}` rather than a chart name."""
    return isinstance(node, MappingNode)


def case_charts(node: MappingNode) -> tuple[str, ...]:
    """The chart names the cases of `{by, cases}` name (distinct, in case order)."""
    names = (text(value) for _key, value in mapping_items(node.get("cases")))
    return tuple(dict.fromkeys(name for name in names if name))


def first_case_chart(node: MappingNode) -> str:
    """The chart name of the first case (the invocation's `chart`), "" when none reads."""
    return next(iter(case_charts(node)), "")


def compile_chart_choice(
    node: MappingNode, invoke_id: str, scope: ExpressionScope, problems: list[Diagnostic]
) -> ChartChoice | None:
    """`chart: {by, cases}` of invoke `invoke_id` compiled, or None (its problems added)."""
    by_node = node.get("by")
    if not isinstance(by_node, ScalarNode):
        return None  # the schema reports a missing or non-scalar `by`
    what = f"chart choice of invoke '{invoke_id}'"
    compiled = compile_expression(by_node.value, by_node.span, scope, None, what)
    if isinstance(compiled, tuple):
        problems.extend(compiled)
        return None
    kind = compiled.type
    if kind.base not in CHOOSABLE or kind.structured:
        problems.append(
            _error(
                f"the {what} is {kind.describe()}: a case needs a string, integer or boolean",
                by_node.span,
                "choose by a field whose values name the cases, e.g. `by: ctx.method`",
            )
        )
        return None
    cases = _cases(node, kind, what, problems)
    if cases is None:
        return None
    return ChartChoice(by=compiled, cases=cases, span=node.span)


def _case_value(raw: object, kind: ValueType) -> object:
    """A case key as a value of `kind` (YAML mapping keys are read as text: `1` and `true`
    are the integer and the boolean for an integer or boolean `by`)."""
    if isinstance(raw, str) and kind.base is BaseType.INTEGER:
        return int(raw) if re.fullmatch(r"-?[0-9]+", raw) else raw
    if isinstance(raw, str) and kind.base is BaseType.BOOLEAN:
        return {"true": True, "false": False}.get(raw, raw)
    return raw


def _cases(
    node: MappingNode, kind: ValueType, what: str, problems: list[Diagnostic]
) -> tuple[ChartCase, ...] | None:
    cases: list[ChartCase] = []
    seen: dict[tuple[type, object], SourceSpan] = {}
    ok = True
    for key, value in mapping_items(node.get("cases")):
        chart = text(value)
        if not chart:
            ok = False  # the schema reports a case that is not a chart name
            continue
        raw = _case_value(key.value, kind)
        if not isinstance(raw, str | int | bool) or not kind.accepts(raw):
            problems.append(
                _error(
                    f"case {raw!r} of the {what} is not a value of its expression "
                    f"({kind.describe()})",
                    key.span,
                    "write each case as a value `by` can take "
                    "(quote a string that YAML would read as a number or boolean)",
                )
            )
            ok = False
            continue
        mark = (type(raw), raw)
        if mark in seen:
            problems.append(
                _error(
                    f"duplicate case {raw!r} in the {what} (first at line {seen[mark].line})",
                    key.span,
                    "each value starts one chart: keep one case for it",
                )
            )
            ok = False
            continue
        seen[mark] = key.span
        cases.append(ChartCase(value=raw, chart=chart, span=key.span))
    return tuple(cases) if ok and cases else None

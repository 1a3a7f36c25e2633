"""The `if` effect (SCXML `<if>/<elseif>/<else>`) compiled: its conditions as booleans in
the scope of the effects around it, its branches as effect lists of their own.

```yaml
- if:
    cond: ctx.total > 100
    then: [{assign: {tier: "'gold'"}}]
    elif: [{cond: ctx.total > 10, then: [{assign: {tier: "'silver'"}}]}]
    else: [{assign: {tier: "'basic'"}}]
```
"""

from __future__ import annotations

from collections.abc import Callable

from statekit.compiler.diagnostics import Diagnostic, SourceSpan
from statekit.compiler.expressions.expression import compile_expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.ir import Conditional, ConditionalBranch, Effect, GuardCheck
from statekit.compiler.model.null_narrowing import Narrowing
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import BOOLEAN

EFFECT_CONDITION_REASON = "if-effect"
"""The `reason` of an `if` effect's conditions (a condition that fails rejects nothing)."""

CompileList = Callable[
    [Node | None, ExpressionScope], tuple[tuple[Effect, ...], list[Diagnostic], ExpressionScope]
]
"""Compiles a nested effect list in a scope: its effects, problems and the scope at its end."""


def compile_conditional(
    value: Node,
    span: SourceSpan,
    scope: ExpressionScope,
    compile_list: CompileList,
    problems: list[Diagnostic],
    narrowing: Narrowing,
) -> tuple[Conditional | None, ExpressionScope]:
    """The `if` effect of mapping `value` (None when the schema already refused its shape,
    or a condition has errors: they are in `problems`, as are the branches' own), and the
    scope after it: narrowed where every way through it narrows (`null_narrowing`). A
    branch's effects see its condition's `is not None` tests."""
    if not isinstance(value, MappingNode):
        return None, scope
    arms: list[tuple[Node | None, Node | None, str]] = [
        (value.get("cond"), value.get("then"), "'if' cond")
    ]
    elifs = value.get("elif")
    if isinstance(elifs, SequenceNode):
        for number, item in enumerate(elifs.items, start=1):
            if isinstance(item, MappingNode):
                arms.append((item.get("cond"), item.get("then"), f"'elif' {number} cond"))
    branches: list[ConditionalBranch] = []
    ends: list[ExpressionScope] = []
    ok = True
    for cond, then, what in arms:
        check = _condition(cond, scope, what, problems)
        tested = scope if check is None else narrowing.tested(scope, check.expression.tree)
        effects, found, end = compile_list(then, tested)
        problems.extend(found)
        ends.append(end)
        if check is None:
            ok = False
        else:
            branches.append(ConditionalBranch(check=check, effects=effects))
    otherwise, found, end = compile_list(value.get("else"), scope)
    problems.extend(found)
    ends.append(end)  # (no `else`: `scope` itself, the way through no branch)
    after = narrowing.joined(scope, ends)
    if not ok:
        return None, after
    return Conditional(branches=tuple(branches), otherwise=otherwise, span=span), after


def _condition(
    node: Node | None, scope: ExpressionScope, what: str, problems: list[Diagnostic]
) -> GuardCheck | None:
    if not isinstance(node, ScalarNode):
        return None  # the schema requires `cond`: an expression or a boolean literal
    result = compile_expression(node.value, node.span, scope, BOOLEAN, what)
    if isinstance(result, tuple):
        problems.extend(result)
        return None
    return GuardCheck(name=None, expression=result, reason=EFFECT_CONDITION_REASON, span=node.span)

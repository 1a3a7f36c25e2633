"""The tests for null an expression makes: which context fields a true value proves are
not null (`ctx.f is not None`, alone or among the operands of an `and`), and the scope
that knows it. Null narrowing reads them: within an `and` (`ctx.f is not None and
ctx.f > 2`) and in an `if` effect's branch (`statekit.compiler.model.null_narrowing`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from types import MappingProxyType

from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.expressions.tree import BoolOp, ContextRef, ExprNode, IsNone


def not_null_tests(node: ExprNode) -> Iterator[str]:
    """The context fields `node` being true proves are not null: `ctx.f is not None`
    (the language's one test for null: `!= None` is refused), and those among the
    operands of an `and`."""
    if isinstance(node, BoolOp) and node.op == "and":
        for value in node.values:
            yield from not_null_tests(value)
    elif isinstance(node, IsNone) and node.negated and isinstance(node.operand, ContextRef):
        yield node.operand.field


def not_null_in(scope: ExpressionScope, fields: Iterable[str]) -> ExpressionScope:
    """`scope` where each of `fields` (context fields) is known not to be null."""
    context = scope.context
    changed = {
        name: replace(context[name], nullable=False)
        for name in fields
        if name in context and context[name].nullable
    }
    if not changed:
        return scope
    return replace(scope, context=MappingProxyType({**context, **changed}))

"""The expressions of one chart's compile, each text compiled once per scope.

A chart often writes the same expression in many places (`ctx.count + 1` in the
`assign` of every transition of one event): its check and its closures depend only on
the text, the scope it is written in, the type expected and its role, never on where
it is. `ExpressionMemo` keeps each expression that compiled cleanly and gives a later
one with the same text, scope, type and role the same tree, type and closures at its
own span. An expression with problems is compiled each time, so every diagnostic is
made at its own position exactly as before.

One memo lives as long as one compile (its scopes are that compile's); a scope and an
expected type are recognised by identity (hashing a type costs more than the look-up
saves), and the memo holds both, so their identities are never reused.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Diagnostic, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.source.nodes import Scalar
from statekit.compiler.value_types import ValueType

_Key = tuple[str, int, int, str]


class ExpressionMemo:
    """`compile_expression` that compiles a repeated expression of one compile once."""

    def __init__(self) -> None:
        self._kept: dict[_Key, tuple[ExpressionScope, ValueType | None, Expression]] = {}

    def compile(
        self,
        source: Scalar,
        span: SourceSpan,
        scope: ExpressionScope,
        expected: ValueType | None,
        what: str,
    ) -> Expression | tuple[Diagnostic, ...]:
        """What `compile_expression(source, span, scope, expected, what)` returns."""
        if not isinstance(source, str):
            return compile_expression(source, span, scope, expected, what)
        key = (source, id(scope), id(expected), what)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is scope and kept[1] is expected:
            same = kept[2]
            return Expression(
                source=source, span=span, tree=same.tree, type=same.type, evaluate=same.evaluate
            )
        result = compile_expression(source, span, scope, expected, what)
        if isinstance(result, Expression):
            self._kept[key] = (scope, expected, result)
        return result

"""What every part of the expression check shares: positions, reporting, the boolean rule.

`statekit.compiler.expressions.checker.Checker` is assembled from this core and one
class per family of constructs (`operator_checks`, `call_checks`); each family calls
`visit` for its sub-expressions and `report` for its problems.
"""

from __future__ import annotations

import ast

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.durations import DurationLiterals
from statekit.compiler.expressions.positions import ExpressionPositions
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.expressions.tree import ExprNode
from statekit.compiler.rules import expression_type
from statekit.compiler.value_types import BOOLEAN


class CheckerCore:
    """One expression's source, scope and collected diagnostics."""

    def __init__(self, source: str, span: SourceSpan, scope: ExpressionScope, what: str) -> None:
        self.positions = ExpressionPositions(source, span)
        self.text = self.positions.text
        self.lines = self.positions.lines
        self.span = span
        self.scope = scope
        self.what = what
        self.diagnostics: list[Diagnostic] = []
        self.root: ast.expr | None = None
        self.durations = DurationLiterals(self.text)

    def visit(self, node: ast.expr) -> ExprNode | None:
        """Check one sub-expression: its typed node, or None after reporting (`Checker`)."""
        raise NotImplementedError

    def report(
        self, slug: str, node: ast.AST | None, message: str, notes: tuple[str, ...] = ()
    ) -> None:
        """Record an error at `node`'s span, its message prefixed with the expression's role."""
        span = self.positions.span_of(node)
        self.diagnostics.append(
            Diagnostic(
                slug=slug,
                severity=Severity.ERROR,
                message=f"{self.what}: {message}",
                span=span,
                notes=notes,
            )
        )

    def report_at(self, slug: str, start: int, end: int, message: str) -> None:
        """Record an error at columns `start:end` of the expression's first line."""
        self.diagnostics.append(
            Diagnostic(
                slug=slug,
                severity=Severity.ERROR,
                message=f"{self.what}: {message}",
                span=self.positions.at(start, end),
            )
        )

    def segment(self, node: ast.expr) -> str:
        """The source text of `node`, for messages."""
        return ast.get_source_segment(self.text, node) or type(node).__name__

    def require_boolean(self, node: ast.expr, value: ExprNode | None, role: str) -> bool:
        """Whether `value` is a boolean; reports `role`'s need for one when it is not."""
        if value is None:
            return False
        if value.type != BOOLEAN:
            message = (
                f"{role} needs a boolean, but {self.segment(node)} is {value.type.describe()}"
                " (no truthiness: compare explicitly)"
            )
            self.report(expression_type.SLUG, node, message)
            return False
        return True

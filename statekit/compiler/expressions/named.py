"""A named expression of the chart's `define:` section, as the compiled chart keeps it."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression


@dataclass(frozen=True, slots=True)
class NamedExpression:
    """One definition: its name, its checked expression (the type inferred) and the span
    of its name. Every use of the name holds a copy of `expression.tree`."""

    name: str
    expression: Expression
    span: SourceSpan

    def to_json(self) -> dict[str, object]:
        """Canonical JSON form: the expression's."""
        return self.expression.to_json()

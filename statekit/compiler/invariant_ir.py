"""The compiled invariants of a chart (`invariants:`): state invariants over the active
states, expression invariants over the context; part of `CompiledChart`."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression


@dataclass(frozen=True, slots=True)
class StateInvariant:
    """Whenever every `when` state is active, every `require` is active and no `forbid` is."""

    name: str
    when: tuple[int, ...]
    require: tuple[int, ...]
    forbid: tuple[int, ...]
    description: str | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ExpressionInvariant:
    """`assert: expr` over `ctx` and `active()`; enforced at runtime after every step."""

    name: str
    expression: Expression
    description: str | None
    span: SourceSpan


Invariant = StateInvariant | ExpressionInvariant

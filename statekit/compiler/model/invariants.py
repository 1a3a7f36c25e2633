"""The chart's `invariants:` compiled: state invariants resolved, expression invariants checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from statekit.compiler.diagnostics import Diagnostic, SourceSpan
from statekit.compiler.expressions.expression import compile_expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.invariant_ir import ExpressionInvariant, Invariant, StateInvariant
from statekit.compiler.model.declarations import mapping_items, scalar_list, text
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode
from statekit.compiler.value_types import BOOLEAN

ResolveActivatable = Callable[[str, SourceSpan], int | Diagnostic]
"""Resolves a reference to a state able to be active, or gives the diagnostic to report."""


@dataclass(frozen=True, slots=True)
class CompiledInvariants:
    """The invariants without errors, in declaration order, and the errors."""

    invariants: tuple[Invariant, ...]
    problems: tuple[Diagnostic, ...]


def compile_invariants(
    node: Node | None, scope: ExpressionScope, resolve_activatable: ResolveActivatable
) -> CompiledInvariants:
    """Every invariant in declaration order (those with errors left out), and the errors.

    `scope` is where `assert` expressions are checked (no event is in scope between events).
    """
    out: list[Invariant] = []
    problems: list[Diagnostic] = []
    for key, spec in mapping_items(node):
        if not isinstance(spec, MappingNode):
            continue  # the schema admits only invariant mappings
        name = str(key.value)
        description = text(spec.get("description"))
        assertion = spec.get("assert")
        if isinstance(assertion, ScalarNode):
            result = compile_expression(
                assertion.value, assertion.span, scope, BOOLEAN, f"invariant '{name}'"
            )
            if isinstance(result, tuple):
                problems.extend(result)
            else:
                out.append(
                    ExpressionInvariant(
                        name=name, expression=result, description=description, span=key.span
                    )
                )
            continue
        refs: dict[str, tuple[int, ...]] = {}
        for part in ("when", "require", "forbid"):
            ids = []
            for ref in scalar_list(spec.get(part)):
                found = resolve_activatable(str(ref.value), ref.span)
                if isinstance(found, Diagnostic):
                    problems.append(found)
                else:
                    ids.append(found)
            refs[part] = tuple(ids)
        out.append(
            StateInvariant(
                name=name,
                when=refs["when"],
                require=refs["require"],
                forbid=refs["forbid"],
                description=description,
                span=key.span,
            )
        )
    return CompiledInvariants(invariants=tuple(out), problems=tuple(problems))

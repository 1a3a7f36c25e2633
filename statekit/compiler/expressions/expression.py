"""The safe expression language: parse, allow-list, type-check, compile once.

Guards, `if` conditions, invariants and `assign` values are written as a small
subset of Python expression syntax (see docs/dsl.md, section Expressions).
`compile_expression` turns one of them into an `Expression`:

1. bound the input (at most `MAX_SOURCE_LENGTH` characters) and parse it with
   `ast.parse(..., mode="eval")`; a syntax error is `expression-syntax` at the
   column where Python's parser stopped;
2. bound the nesting (`MAX_DEPTH`), then walk the AST against an allow-list:
   every construct outside the language is `expression-unsafe`, naming it;
3. type-check each allowed construct against the declared context and payload
   types (`expression-type`: unknown fields, operands that cannot meet,
   truthiness of non-booleans, a result not assignable where it goes);
4. build the typed tree (`statekit.compiler.expressions.tree`) and compile it
   once into closures (`statekit.compiler.expressions.closures`).

Every problem in an expression is reported, each with its own column (the
span of the YAML scalar, offset by the position inside the expression when
the scalar is on one line). Nothing from user text is ever passed to `eval`,
`exec` or `compile`: the only interpretation of the text is `ast.parse`, and
the only code that runs afterwards is the closures built from the tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.checker import Checker
from statekit.compiler.expressions.closures import compile_tree
from statekit.compiler.expressions.evaluator import Evaluator
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.expressions.tree import (
    Active,
    ContextRef,
    EventMeta,
    EventRef,
    ExprNode,
    InstanceId,
    Literal,
    LiteralValue,
    Now,
    iter_nodes,
    tree_to_json,
)
from statekit.compiler.expressions.type_relations import assign_problem, literal_type
from statekit.compiler.rules import expression_type, expression_unsafe
from statekit.compiler.value_types import (
    ValueType,
)


@dataclass(frozen=True, slots=True)
class Expression:
    """A checked, typed and compiled expression.

    `evaluate(ctx, event_payload, active_state_ids)` returns its value; it may
    raise `ArithmeticError` (division by zero, float overflow), which the
    engine classifies.
    """

    source: str
    span: SourceSpan
    tree: ExprNode
    type: ValueType
    evaluate: Evaluator = field(compare=False, repr=False)

    def to_json(self) -> dict[str, object]:
        """Canonical JSON form: source, result type and the typed tree."""
        return {"source": self.source, "type": self.type.to_json(), "tree": tree_to_json(self.tree)}

    def active_states(self) -> frozenset[int]:
        """Ids of the states this expression tests with `active()`."""
        return frozenset(n.state_id for n in iter_nodes(self.tree) if isinstance(n, Active))

    def reads_event(self) -> bool:
        """Whether the value depends on the event payload."""
        return any(isinstance(n, EventRef | EventMeta) for n in iter_nodes(self.tree))

    def reads_event_meta(self) -> bool:
        """Whether the value depends on what the event is (`_event.name`, `.type`, ...)."""
        return any(isinstance(n, EventMeta) for n in iter_nodes(self.tree))

    def reads_context(self) -> bool:
        """Whether the value depends on the context."""
        return any(isinstance(n, ContextRef) for n in iter_nodes(self.tree))

    def reads_clock(self) -> bool:
        """Whether the value depends on the step's clock reading (`now`)."""
        return any(isinstance(n, Now) for n in iter_nodes(self.tree))

    def reads_instance(self) -> bool:
        """Whether the value depends on the instance being stepped (`instance.id`)."""
        return any(isinstance(n, InstanceId) for n in iter_nodes(self.tree))


def compile_expression(
    source: str | int | float | bool | None,
    span: SourceSpan,
    scope: ExpressionScope,
    expected: ValueType | None = None,
    what: str = "expression",
) -> Expression | tuple[Diagnostic, ...]:
    """Check and compile one expression, or return every diagnostic found in it.

    A non-string `source` (a YAML literal such as `0`, `true` or `null`) is a
    literal of its own type. With `expected`, the result must be assignable to
    that type (`BOOLEAN` for guards; a context field's type for `assign`).
    `what` names the expression's role in messages ("guard 'paid'").
    """
    if not isinstance(source, str):
        return _compile_literal(source, span, expected, what)
    checker = Checker(source, span, scope, what)
    node = checker.check()
    if node is not None and expected is not None:
        problem = assign_problem(node, expected)
        if problem is not None:
            checker.report(expression_type.SLUG, checker.root, problem)
    if node is None or checker.diagnostics:
        return tuple(sorted(checker.diagnostics, key=Diagnostic.sort_key))
    return Expression(
        source=source, span=span, tree=node, type=node.type, evaluate=compile_tree(node)
    )


def _compile_literal(
    value: LiteralValue, span: SourceSpan, expected: ValueType | None, what: str
) -> Expression | tuple[Diagnostic, ...]:
    text = (
        "null" if value is None else repr(value).lower() if isinstance(value, bool) else repr(value)
    )
    if isinstance(value, float) and not math.isfinite(value):
        return (
            Diagnostic(
                slug=expression_unsafe.SLUG,
                severity=Severity.ERROR,
                message=f"{what}: {text} is not a finite number",
                span=span,
            ),
        )
    node = Literal(value=value, type=literal_type(value))
    problem = assign_problem(node, expected) if expected is not None else None
    if problem is not None:
        return (
            Diagnostic(
                slug=expression_type.SLUG,
                severity=Severity.ERROR,
                message=f"{what}: {problem}",
                span=span,
            ),
        )
    return Expression(
        source=text, span=span, tree=node, type=node.type, evaluate=compile_tree(node)
    )

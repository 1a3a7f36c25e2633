"""The `foreach` effect (SCXML `<foreach>`) compiled: its list expression, its read-only
locals typed from the list's item type, its body as an effect list in their scope.

```yaml
- foreach:
    array: ctx.lines          # a list expression
    item: line                # the element, read-only in the body
    index: i                  # optional: its position from 0
    do: [{assign: {total: ctx.total + line}}]
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import compile_expression
from statekit.compiler.expressions.language import CLOCK_NAME, FUNCTIONS, NAME_LITERALS
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.ir import Effect, Foreach, GuardCheck
from statekit.compiler.model.declarations import text
from statekit.compiler.model.null_narrowing import Narrowing
from statekit.compiler.rules import expression_type, schema
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode
from statekit.compiler.value_types import BOOLEAN, INTEGER, BaseType

FOREACH_REASON = "foreach"
"""The `reason` of a `foreach`'s `nonempty` check (it rejects nothing)."""

_RESERVED = frozenset(
    {"ctx", "event", "_event", "tables", "instance", CLOCK_NAME, *FUNCTIONS, *NAME_LITERALS}
)

CompileBody = Callable[
    [Node | None, ExpressionScope], tuple[tuple[Effect, ...], list[Diagnostic], ExpressionScope]
]
"""Compiles a loop body in a scope: its effects, problems and the scope at its end (the
body's narrowings that hold on every pass only: `null_narrowing`)."""


def compile_foreach(
    value: Node,
    span: SourceSpan,
    scope: ExpressionScope,
    compile_body: CompileBody,
    problems: list[Diagnostic],
    narrowing: Narrowing,
) -> tuple[Foreach | None, ExpressionScope]:
    """The `foreach` effect of mapping `value` (None after a problem, in `problems`), and
    the scope after it: what holds before the loop and after its body (it may not run)."""
    loop = _compile_foreach(value, span, scope, compile_body, problems)
    if loop is None:
        return None, scope
    effect, end = loop
    return effect, narrowing.joined(scope, (scope, end))


def _compile_foreach(
    value: Node,
    span: SourceSpan,
    scope: ExpressionScope,
    compile_body: CompileBody,
    problems: list[Diagnostic],
) -> tuple[Foreach | None, ExpressionScope] | None:
    if not isinstance(value, MappingNode):
        return None
    array_node = value.get("array")
    if not isinstance(array_node, ScalarNode):
        return None  # the schema requires it: an expression
    array = compile_expression(array_node.value, array_node.span, scope, None, "foreach 'array'")
    if isinstance(array, tuple):
        problems.extend(array)
        return None
    if array.type.base is not BaseType.LIST or array.type.nullable:
        problems.append(
            _error(
                expression_type.SLUG,
                f"foreach 'array' must be a list, but {array.source} is {array.type.describe()}",
                array_node.span,
            )
        )
        return None
    names: dict[str, object] = {}
    for role in ("item", "index"):
        node = value.get(role)
        name = text(node)
        if node is None or name is None:
            continue
        clash = _clash(name, role, scope, names)
        if clash is not None:
            problems.append(_error(schema.SLUG, clash, node.span))
            return None
        names[name] = role
    item, index = text(value.get("item")), text(value.get("index"))
    if item is None:
        return None
    item_type = array.type.items
    local_types = dict(scope.locals)
    if item_type is not None:  # (None: `[]`, a list of no element: the body never runs)
        local_types[item] = item_type
    if index is not None:
        local_types[index] = INTEGER
    inner = replace(scope, locals=MappingProxyType(local_types))
    effects, found, end = compile_body(value.get("do"), inner)
    problems.extend(found)
    check = compile_expression(f"len({array.source}) > 0", array_node.span, scope, BOOLEAN)
    if isinstance(check, tuple):  # the array compiled, so its length does: never here
        problems.extend(check)
        return None
    guard = GuardCheck(name=None, expression=check, reason=FOREACH_REASON, span=array_node.span)
    loop = Foreach(array=array, item=item, index=index, effects=effects, nonempty=guard, span=span)
    return loop, end


def _clash(name: str, role: str, scope: ExpressionScope, taken: dict[str, object]) -> str | None:
    """Why a local cannot take `name` (a word of the language, a definition, a local
    of an enclosing body or the other local of this one), or None."""
    if name in _RESERVED:
        return f"foreach '{role}': '{name}' is a word of the expression language"
    if name in scope.definitions:
        return f"foreach '{role}': '{name}' is a name from define:, it cannot be a local too"
    if name in scope.locals or name in taken:
        return f"foreach '{role}': '{name}' is already a local here"
    return None


def _error(slug: str, message: str, span: SourceSpan) -> Diagnostic:
    return Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span)

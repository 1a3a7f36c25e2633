"""The chart's `define:` section: named expressions, each checked once, used by bare name.

A definition is checked on its first use (or after every other expression, if nothing
uses it), in one scope for the whole chart: the context, `active()`, the tables and the
other definitions. It sees no event: a definition means the same in every guard, `if`,
assign, emit, timer and invariant that uses it, which is what lets it be checked once
and its type inferred once. A use inlines the checked tree (see
`statekit.compiler.expressions.definition_checks`).

A definition used while it is being checked closes a cycle (`definition-cycle`, at the
use, naming the cycle). Definitions may use each other at most
`MAX_DEFINITION_NESTING` deep, which bounds the checker's recursion on hostile charts.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.language import FUNCTIONS, NAME_LITERALS
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.expressions.named import NamedExpression
from statekit.compiler.expressions.scope import (
    DefinitionCycle,
    DefinitionFailed,
    Expansion,
    ExpressionScope,
    NoEvent,
)
from statekit.compiler.ir import FieldDecl
from statekit.compiler.model.declarations import mapping_items
from statekit.compiler.rules import expression_unsafe
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import Node, ScalarNode

MAX_DEFINITION_NESTING = 32
"""Deepest chain of definitions using definitions (`a` uses `b` uses `c` ...)."""
NO_EVENT_IN_DEFINITIONS = (
    "a definition means the same wherever it is used, so it sees no event: "
    "read event.<field> where the definition is used"
)
RESERVED_NAMES = frozenset(
    {
        "ctx",
        "event",
        "tables",
        "now",
        "instance",
        "True",
        "False",
        "None",
        *NAME_LITERALS,
        *FUNCTIONS,
    }
)
"""Names a definition cannot take: the language's own."""

_FAILED = DefinitionFailed()


class ChartDefinitions:
    """The chart's definitions, checked on demand (the `Definitions` of every scope)."""

    def __init__(
        self,
        node: Node | None,
        context: Mapping[str, FieldDecl],
        resolve_state: Callable[[str, SourceSpan], int | Diagnostic],
        tables: Mapping[str, LookupTable],
        broken_tables: frozenset[str] = frozenset(),
    ) -> None:
        """`broken_tables` are the tables declared with errors (reads of them report
        nothing more)."""
        self.problems: list[Diagnostic] = []
        self._sources: dict[str, tuple[ScalarNode, ScalarNode]] = {}
        for key, value in mapping_items(node):
            name = str(key.value)
            if name in RESERVED_NAMES or keyword.iskeyword(name):
                self.problems.append(
                    Diagnostic(
                        slug=schema_rule.SLUG,
                        severity=Severity.ERROR,
                        message=f"definition '{name}': the name belongs to the expression language",
                        span=key.span,
                        notes=("pick another name",),
                    )
                )
            elif isinstance(value, ScalarNode):
                self._sources[name] = (key, value)
        self._scope = ExpressionScope(
            context={name: f.type for name, f in context.items()},
            event=NoEvent(NO_EVENT_IN_DEFINITIONS),
            resolve_state=resolve_state,
            definitions=self,
            tables=tables,
            broken_tables=broken_tables,
        )
        self._done: dict[str, Expression | DefinitionFailed] = {}
        self._stack: list[str] = []

    def __contains__(self, name: object) -> bool:
        return name in self._sources

    @property
    def scope(self) -> ExpressionScope:
        """A scope with the chart's definitions and tables (its event is none)."""
        return self._scope

    def names(self) -> tuple[str, ...]:
        """Every usable defined name, in declaration order."""
        return tuple(self._sources)

    def expand(self, name: str) -> Expansion:
        """The checked tree `name` stands for, or why there is none."""
        found = self._done.get(name)
        if found is None:
            if name in self._stack:
                return DefinitionCycle((*self._stack[self._stack.index(name) :], name))
            if len(self._stack) >= MAX_DEFINITION_NESTING:
                self._too_deep(name)
                return _FAILED
            found = self._done[name] = self._check(name)
        return found if isinstance(found, DefinitionFailed) else found.tree

    def _check(self, name: str) -> Expression | DefinitionFailed:
        _, value = self._sources[name]
        self._stack.append(name)
        try:
            result = compile_expression(
                value.value, value.span, self._scope, None, f"definition '{name}'"
            )
        finally:
            self._stack.pop()
        if isinstance(result, tuple):
            self.problems.extend(result)
            return _FAILED
        return result

    def _too_deep(self, name: str) -> None:
        chain = " → ".join([*self._stack, name])
        _, value = self._sources[self._stack[-1]]
        self.problems.append(
            Diagnostic(
                slug=expression_unsafe.SLUG,
                severity=Severity.ERROR,
                message=(
                    f"definition '{self._stack[-1]}': definitions use each other more than "
                    f"{MAX_DEFINITION_NESTING} deep"
                ),
                span=value.span,
                notes=(f"the chain: {chain}",),
            )
        )

    def check_all(self) -> Mapping[str, NamedExpression]:
        """Check every definition not checked yet; the checked ones, in declaration order."""
        for name in self._sources:
            self.expand(name)
        out: dict[str, NamedExpression] = {}
        for name, (key, _) in self._sources.items():
            found = self._done.get(name)
            if isinstance(found, Expression):
                out[name] = NamedExpression(name=name, expression=found, span=key.span)
        return MappingProxyType(out)

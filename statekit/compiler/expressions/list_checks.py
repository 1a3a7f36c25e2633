"""The checks of list values in expressions: `x[i]`, `v in x`, `[a, b]`, with their types.

A list is a context or payload field declared `{type: list, items: <spec>}`. Its element
is read by an integer index from 0 (out of range, or negative, fails at run time as a
division by zero does); `v in x` compares as `==` does; a list display `[a, b]` outside
`in` is a value whose elements share one type.
"""

from __future__ import annotations

import ast

from statekit.compiler.expressions.checker_core import CheckerCore
from statekit.compiler.expressions.tree import Contains, ExprNode, Index, ListDisplay
from statekit.compiler.expressions.type_relations import comparison_problem, unify
from statekit.compiler.rules import expression_type, expression_unsafe
from statekit.compiler.value_types import BaseType, ValueType

SUBSCRIPTS = "subscripts are only allowed on a list or a declared table: tables.<name>[key]"
EMPTY_LIST = ValueType(base=BaseType.LIST)
"""The type of `[]`: a list with no element type, which fits any list."""


class ListChecks(CheckerCore):
    """Indexing, membership and displays of lists."""

    def _list_index(self, node: ast.Subscript) -> ExprNode | None:
        """`x[i]` on a list `x` (a subscript that is not a table read)."""
        if isinstance(node.slice, ast.Slice | ast.Tuple):
            self.report(expression_unsafe.SLUG, node.slice, "a list is read with one index")
            return None
        if isinstance(node.value, ast.Name) and node.value.id in ("ctx", "event", "_event"):
            self.report(expression_unsafe.SLUG, node, SUBSCRIPTS)
            return None
        value = self.visit(node.value)
        index = self.visit(node.slice)
        if value is None or index is None:
            return None
        if value.type.base is not BaseType.LIST or value.type.items is None:
            message = f"{SUBSCRIPTS}, but {self.segment(node.value)} is {value.type.describe()}"
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if value.type.nullable:
            message = f"{self.segment(node.value)} may be null: test it with 'is not None' first"
            self.report(expression_type.SLUG, node.value, message)
            return None
        if index.type.base is not BaseType.INTEGER or index.type.nullable:
            message = f"a list index is an integer, but {self.segment(node.slice)} is "
            self.report(expression_type.SLUG, node.slice, message + index.type.describe())
            return None
        return Index(value=value, index=index, type=value.type.items)

    def _in_container(self, node: ast.Compare, negated: bool) -> ExprNode | None:
        """`v in x` where `x` is a list value (not a display), or a string (`v` a substring)."""
        keyword = "not in" if negated else "in"
        container_ast = node.comparators[0]
        if not isinstance(container_ast, ast.Attribute | ast.Subscript | ast.Name | ast.IfExp):
            message = f"'{keyword}' needs a list display on its right, e.g. x {keyword} ['a', 'b']"
            self.report(expression_unsafe.SLUG, container_ast, message + ", or a list")
            return None
        item = self.visit(node.left)
        container = self.visit(container_ast)
        if item is None or container is None:
            return None
        kind = container.type
        if kind.base is BaseType.STRING and not kind.nullable:  # a substring test
            if item.type.base is not BaseType.STRING or item.type.nullable:
                message = f"'{keyword}' on a string tests a substring, but "
                message += f"{self.segment(node.left)} is {item.type.describe()}"
                self.report(expression_type.SLUG, node.left, message)
                return None
            return Contains(item=item, container=container, negated=negated)
        if kind.base is not BaseType.LIST or kind.items is None or kind.nullable:
            message = (
                f"'{keyword}' needs a list display (x {keyword} ['a', 'b']), a list or a"
                f" string on its right, but {self.segment(container_ast)} is {kind.describe()}"
            )
            self.report(expression_unsafe.SLUG, container_ast, message)
            return None
        element = Index(value=container, index=item, type=kind.items)  # only its type counts
        problem = comparison_problem(
            "==", item, element, node.left, container_ast, lambda _: "an element"
        )
        if problem is not None:
            self.report(expression_type.SLUG, node, problem)
            return None
        return Contains(item=item, container=container, negated=negated)

    def _list_display(self, node: ast.List) -> ExprNode | None:
        """`[a, b, ...]` as a value: its elements share one type (`[]` fits any list)."""
        elements = [self.visit(x) for x in node.elts]
        if any(e is None for e in elements):
            return None
        checked = [e for e in elements if e is not None]
        if not checked:
            return ListDisplay(elements=(), type=EMPTY_LIST)
        joined = checked[0]
        item_type: ValueType | None = joined.type
        for element in checked[1:]:
            item_type = unify(joined, element)
            if item_type is None:
                message = (
                    "the elements of a list have one type, but "
                    f"{joined.type.describe()} and {element.type.describe()} differ"
                )
                self.report(expression_type.SLUG, node, message)
                return None
            joined = ListDisplay(elements=(), type=item_type)  # carries the joined type only
        assert item_type is not None
        return ListDisplay(
            elements=tuple(checked), type=ValueType(base=BaseType.LIST, items=item_type)
        )

"""The check of a named expression's use: a bare name that `define:` declares.

A use stands for the definition's checked tree, inlined: the compiled closure of
`late and ctx.open` is the closure of the written-out expression, and the analysis
reads the same tree. Inlining is bounded: the expression with every definition
expanded has at most `MAX_EXPANDED_NODES` nodes and `MAX_EXPANDED_DEPTH` levels, so
definitions that double each other (`d2: d1 + d1`) cannot grow an exponential tree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from statekit.compiler.expressions.checker_core import CheckerCore
from statekit.compiler.expressions.scope import DefinitionCycle, DefinitionFailed
from statekit.compiler.expressions.tree import ExprNode, children
from statekit.compiler.rules import definition_cycle, expression_unsafe

MAX_EXPANDED_NODES = 10_000
"""Most nodes an expression may have with every definition it uses written out."""
MAX_EXPANDED_DEPTH = 100
"""Deepest nesting an expression may have with every definition it uses written out."""


class DefinitionChecks(CheckerCore):
    """Uses of the chart's definitions (`define:`)."""

    expanded = False  # set once a definition is inlined: the bounds then apply

    def _definition(self, node: ast.Name) -> ExprNode | None:
        expansion = self.scope.definitions.expand(node.id)
        if isinstance(expansion, DefinitionCycle):
            cycle = " → ".join(expansion.path)
            self.report(
                definition_cycle.SLUG,
                node,
                f"'{node.id}' is defined in terms of itself: {cycle}",
                ("a definition cannot use itself, directly or through other definitions",),
            )
            return None
        if isinstance(expansion, DefinitionFailed):
            return None  # its own errors are reported at the definition
        self.expanded = True
        return expansion

    def bounded_expansion(self, tree: ExprNode) -> bool:
        """Whether `tree`, definitions written out, is within the bounds (else reports)."""
        nodes, depth = expanded_size(tree)
        if nodes > MAX_EXPANDED_NODES:
            message = (
                f"with its definitions written out this expression has {nodes} nodes "
                f"(at most {MAX_EXPANDED_NODES})"
            )
        elif depth > MAX_EXPANDED_DEPTH:
            message = (
                f"with its definitions written out this expression nests {depth} levels deep "
                f"(at most {MAX_EXPANDED_DEPTH})"
            )
        else:
            return True
        self.report(expression_unsafe.SLUG, self.root, message)
        return False


def expanded_size(tree: ExprNode) -> tuple[int, int]:
    """(nodes, depth) of `tree` counted as written out: a shared subtree (a definition used
    twice) counts at every use. Linear in the distinct nodes; iterative."""
    sizes: dict[int, tuple[int, int]] = {}
    for node in _post_order(tree):
        parts = [sizes[id(child)] for child in children(node)]
        sizes[id(node)] = (
            1 + sum(n for n, _ in parts),
            1 + max((d for _, d in parts), default=0),
        )
    return sizes[id(tree)]


def _post_order(tree: ExprNode) -> Iterator[ExprNode]:
    """Each distinct node once, after its children."""
    seen: set[int] = set()
    stack: list[tuple[ExprNode, bool]] = [(tree, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            yield node
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children(node) if id(child) not in seen)

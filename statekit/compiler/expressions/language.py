"""What the expression language allows: operators, functions, forbidden constructs, limits."""

from __future__ import annotations

import ast

from statekit.compiler.expressions.tree import (
    ArithOp,
    CallFunc,
    CompareOp,
    LiteralValue,
)

MAX_SOURCE_LENGTH = 2000
"""Longest accepted expression source, in characters."""
MAX_DEPTH = 50
"""Deepest accepted nesting of sub-expressions."""
MAX_EXPONENT = 64
"""Largest literal exponent of `**`, and of nested powers multiplied together."""

COMPARE_OPS: dict[type[ast.cmpop], CompareOp] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
ARITH_OPS: dict[type[ast.operator], ArithOp] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
OTHER_OPS: dict[type[ast.AST], str] = {
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
    ast.Invert: "~",
}
FORBIDDEN: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.Subscript: "subscripts are only allowed on a list or a declared table: tables.<name>[key]",
    ast.Slice: "slices are not allowed",
    ast.Dict: "dict displays are not allowed",
    ast.Set: "set displays are not allowed",
    ast.Tuple: "tuples are only allowed on the right of 'in': x in (a, b)",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.Starred: "starred expressions are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
}
FUNCTIONS = (
    "active",
    "len",
    "abs",
    "min",
    "max",
    "str",
    "format",
    "starts_with",
    "ends_with",
    "matches",
)
CALL_FUNCS: dict[str, CallFunc] = {
    "len": "len",
    "abs": "abs",
    "min": "min",
    "max": "max",
    "str": "str",
}
CALLS_MESSAGE = (
    "calls are limited to active(), len(), abs(), min(), max(), str(), format(),"
    " starts_with(), ends_with(), matches()"
)
CLOCK_NAME = "now"
"""The name of the step's clock reading (epoch milliseconds) in expressions."""
MAX_FORMAT_ARGUMENTS = 32
"""Most placeholders (and arguments) of one `format()`."""
NAME_LITERALS: dict[str, LiteralValue] = {"true": True, "false": False, "null": None}


def depth_exceeds(root: ast.expr, limit: int) -> bool:
    """Whether sub-expressions nest deeper than `limit` (iterative: safe on hostile input)."""
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1 if isinstance(child, ast.expr) else depth))
    return False

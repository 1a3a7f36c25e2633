"""How the types of expression values relate: assignability, unification, comparability."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from statekit.compiler.expressions.tree import (
    BinOp,
    CompareOp,
    ExprNode,
    IfExp,
    Literal,
    LiteralValue,
    children,
)
from statekit.compiler.value_types import (
    BOOLEAN,
    INTEGER,
    NULL,
    NUMBER,
    STRING,
    BaseType,
    ValueType,
)


def literal_type(value: LiteralValue) -> ValueType:
    """The type of a literal value."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return NUMBER
    return STRING


def numeric(t: ValueType) -> bool:
    """Whether values of `t` are numbers (integer or number)."""
    return t.base is BaseType.INTEGER or t.base is BaseType.NUMBER


def plain(t: ValueType) -> ValueType:
    """The type without enum values or nullability (the type of a computed value)."""
    return ValueType(base=t.base)


def enum_miss(values: tuple[str | int, ...] | None, other: ExprNode) -> str | None:
    """If `other` is a literal of the enum's base type but not one of `values`, say so."""
    if values is None or not isinstance(other, Literal) or other.value is None:
        return None
    if type(other.value) is type(values[0]) and other.value not in values:
        listed = ", ".join(repr(v) for v in values)
        return f"{other.value!r} is not one of {listed}"
    return None


def assign_problem(node: ExprNode, expected: ValueType) -> str | None:
    """Why a value of `node` cannot go where `expected` is declared, or None if it can."""
    if isinstance(node, IfExp):
        return assign_problem(node.body, expected) or assign_problem(node.orelse, expected)
    t = node.type
    mismatch = f"expected {expected.describe()}, got {t.describe()}"
    if isinstance(node, Literal):
        if expected.accepts(node.value):
            return None
        if expected.enum is not None and node.value is not None:
            return enum_miss(expected.enum, node) or mismatch
        return mismatch
    if t.base is BaseType.NULL:
        return None if expected.nullable else mismatch
    if t.nullable and not expected.nullable:
        return mismatch
    if expected.enum is not None:
        ok = t.enum is not None and t.base is expected.base and set(t.enum) <= set(expected.enum)
        return None if ok else mismatch
    if expected.base is BaseType.NUMBER:
        return None if numeric(t) else mismatch
    if expected.items is not None:
        return None if list_fits(t, expected) else mismatch
    if expected.fields is not None:
        return None if same_record(t, expected) else mismatch
    return None if t.base is expected.base else mismatch


def same_record(a: ValueType, b: ValueType) -> bool:
    """Whether two record types have the same fields of the same types (nullability of
    the records themselves aside)."""
    return a.fields is not None and a.fields == b.fields


def list_fits(t: ValueType, expected: ValueType) -> bool:
    """Whether a list of type `t` can go where a list of `expected` is declared (`[]`, a
    list of nulls only, fits any list; elements by the rules of `assign`)."""
    if t.base is not BaseType.LIST or expected.items is None:
        return False
    if t.items is None:  # `[]`
        return True
    have, want = t.items, expected.items
    if have.base is BaseType.NULL:
        return want.nullable
    if have.nullable and not want.nullable:
        return False
    if want.enum is not None:
        return have.enum is not None and set(have.enum) <= set(want.enum)
    if want.items is not None:
        return list_fits(have, want)
    if want.fields is not None:
        return same_record(have, want)
    if want.base is BaseType.NUMBER:
        return numeric(have)
    return have.base is want.base


def joined_list(a: ValueType, b: ValueType) -> ValueType | None:
    """The type of `a + b` for two lists (and what `a == b` compares): one item type,
    an integer list joined with a number list is a number list, `[]` joins any list;
    None when the items differ (a list of integer and a list of string)."""
    if a.base is not BaseType.LIST or b.base is not BaseType.LIST or a.nullable or b.nullable:
        return None
    if a.items is None or b.items is None:
        return b if a.items is None else a
    if a.items == b.items:
        return a
    inner = joined_list(a.items, b.items)  # lists of lists: `[[1], []]`
    if inner is not None:
        return ValueType(base=BaseType.LIST, items=inner)
    plain_numbers = [numeric(t) and not t.nullable and t.enum is None for t in (a.items, b.items)]
    if all(plain_numbers):
        return ValueType(base=BaseType.LIST, items=ValueType(base=BaseType.NUMBER))
    return None


def unify(a: ExprNode, b: ExprNode) -> ValueType | None:
    """The type of `x if c else y`, or None when the branches cannot share one."""
    ta, tb = a.type, b.type
    if ta == tb:
        return ta
    if ta.base is BaseType.NULL:
        return replace(tb, nullable=True)
    if tb.base is BaseType.NULL:
        return replace(ta, nullable=True)
    nullable = ta.nullable or tb.nullable
    if ta.fields is not None or tb.fields is not None:  # records: of the same fields only
        return replace(ta, nullable=nullable) if same_record(ta, tb) else None
    if ta.base is not tb.base:
        return (
            ValueType(base=BaseType.NUMBER, nullable=nullable)
            if numeric(ta) and numeric(tb)
            else None
        )
    if ta.enum is not None and tb.enum is not None:
        merged = ta.enum + tuple(v for v in tb.enum if v not in ta.enum)
        return ValueType(base=ta.base, nullable=nullable, enum=merged)
    for enum_side, other in ((a, b), (b, a)):
        if (
            enum_side.type.enum is not None
            and isinstance(other, Literal)
            and other.value in enum_side.type.enum
        ):
            return ValueType(base=ta.base, nullable=nullable, enum=enum_side.type.enum)
    return ValueType(base=ta.base, nullable=nullable)


def comparison_problem(
    op: CompareOp,
    left: ExprNode,
    right: ExprNode,
    left_ast: ast.expr,
    right_ast: ast.expr,
    segment: Callable[[ast.expr], str],
) -> str | None:
    """Why `left op right` is ill-typed or can never hold, or None."""
    lt, rt = left.type, right.type
    if op in ("==", "!="):
        if lt.base is BaseType.NULL or rt.base is BaseType.NULL:
            return f"comparison with None: use 'is None' or 'is not None' instead of '{op}'"
        if lt.base is BaseType.BOOLEAN and rt.base is BaseType.BOOLEAN:
            return None
        if lt.base is BaseType.LIST and rt.base is BaseType.LIST and joined_list(lt, rt):
            return None  # whole lists: equal when their elements are, in order
        if lt.fields is not None and rt.fields is not None and same_record(lt, rt):
            return None  # whole records: equal when every field is
        if (numeric(lt) and numeric(rt)) or lt.base is rt.base is BaseType.STRING:
            miss = enum_miss(lt.enum, right) or enum_miss(rt.enum, left)
            if miss is not None:
                return f"{miss} (the values of {segment(left_ast if lt.enum else right_ast)})"
            if lt.enum is not None and rt.enum is not None and not set(lt.enum) & set(rt.enum):
                return f"'{op}' between {lt.describe()} and {rt.describe()} can never be true"
            return None
        return (
            f"comparing {lt.describe()} with {rt.describe()} using '{op}' can never be true"
            f" ({segment(left_ast)} {op} {segment(right_ast)})"
        )
    if lt.base is BaseType.BOOLEAN or rt.base is BaseType.BOOLEAN:
        return f"booleans cannot be ordered with '{op}'"
    if lt.nullable or rt.nullable:
        nullable, t = (left_ast, lt) if lt.nullable else (right_ast, rt)
        return (
            f"'{op}' cannot order a value that may be null: {segment(nullable)} is {t.describe()}"
        )
    if (numeric(lt) and numeric(rt)) or lt.base is rt.base is BaseType.STRING:
        return None
    return f"'{op}' cannot compare {lt.describe()} with {rt.describe()}"


def power_degree(node: ExprNode) -> int:
    """The largest product of `**` exponents along any path of nested powers in `node`."""
    if isinstance(node, BinOp) and node.op == "**" and isinstance(node.right, Literal):
        return power_degree(node.left) * int(node.right.value or 0)
    return max((power_degree(child) for child in children(node)), default=1)

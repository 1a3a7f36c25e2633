"""The typed expression tree: one small frozen dataclass per construct of the language.

`statekit.compiler.expressions.checker` builds it from an expression's Python AST,
each node carrying its inferred `ValueType`. The tree is the expression's
meaning as data: `tree_to_json` serialises it canonically, `iter_nodes` walks it
for static analysis, and `statekit.compiler.expressions.closures` compiles it.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

from statekit.compiler.expressions.event_meta import MetaField
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.value_types import (
    BOOLEAN,
    INTEGER,
    STRING,
    ValueType,
)

CompareOp: TypeAlias = typing.Literal["==", "!=", "<", "<=", ">", ">="]
ArithOp: TypeAlias = typing.Literal["+", "-", "*", "/", "//", "%", "**"]
UnaryOpSymbol: TypeAlias = typing.Literal["-", "+"]
CallFunc: TypeAlias = typing.Literal["len", "abs", "min", "max", "str", "starts_with", "ends_with"]
LiteralValue: TypeAlias = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: a number, a string, a boolean or None."""

    value: LiteralValue
    type: ValueType


@dataclass(frozen=True, slots=True)
class ContextRef:
    """`ctx.<field>`: a declared context field."""

    field: str
    type: ValueType


@dataclass(frozen=True, slots=True)
class EventRef:
    """`event.<field>`: a payload field of the triggering event."""

    field: str
    type: ValueType


@dataclass(frozen=True, slots=True)
class EventMeta:
    """`_event.name`, `.type`, `.origin`, `.invokeid`, `.sendid` or `.origintype`: what
    the event being processed is (`statekit.compiler.expressions.event_meta`); its
    `type` is nullable in entry and exit actions and eventless transitions."""

    field: MetaField
    type: ValueType


@dataclass(frozen=True, slots=True)
class LocalRef:
    """A read-only local of a `foreach` body: its `item` or `index` name."""

    name: str
    type: ValueType


@dataclass(frozen=True, slots=True)
class Index:
    """`x[i]`: the element of list `x` at integer `i` (from 0; out of range fails)."""

    value: ExprNode
    index: ExprNode
    type: ValueType


@dataclass(frozen=True, slots=True)
class FieldRead:
    """`x.<name>`: the field `name` of record `x`."""

    value: ExprNode
    name: str
    type: ValueType


@dataclass(frozen=True, slots=True)
class RecordWith:
    """A new record: `record` with its field `name` set to `value` (what an `assign` to
    `ctx.<field>.<name>` stores; not written in an expression)."""

    record: ExprNode
    name: str
    value: ExprNode
    type: ValueType


@dataclass(frozen=True, slots=True)
class Contains:
    """`item in x` on a list `x` (not a list display) or a string `x` (a substring), or
    `not in` when `negated`."""

    item: ExprNode
    container: ExprNode
    negated: bool
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class ListDisplay:
    """`[a, b, ...]` as a value: a list of one element type."""

    elements: tuple[ExprNode, ...]
    type: ValueType


@dataclass(frozen=True, slots=True)
class Active:
    """`active('<ref>')`: whether the state resolved from `ref` (id `state_id`) is active."""

    state_id: int
    ref: str
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class Not:
    """`not <operand>` (the operand is boolean)."""

    operand: ExprNode
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class BoolOp:
    """`a and b and ...` / `a or b or ...`, short-circuiting, over booleans."""

    op: typing.Literal["and", "or"]
    values: tuple[ExprNode, ...]
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class Compare:
    """`left ops[0] comparators[0] ops[1] comparators[1] ...` (Python's chained comparison)."""

    left: ExprNode
    ops: tuple[CompareOp, ...]
    comparators: tuple[ExprNode, ...]
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class BinOp:
    """Arithmetic on numbers, or `+` on two strings or two lists (concatenation); `**`
    only with a literal exponent."""

    op: ArithOp
    left: ExprNode
    right: ExprNode
    type: ValueType


@dataclass(frozen=True, slots=True)
class UnaryOp:
    """`-x` or `+x` on a number."""

    op: UnaryOpSymbol
    operand: ExprNode
    type: ValueType


@dataclass(frozen=True, slots=True)
class IfExp:
    """`body if test else orelse`."""

    test: ExprNode
    body: ExprNode
    orelse: ExprNode
    type: ValueType


@dataclass(frozen=True, slots=True)
class InList:
    """`item in [options...]`, or `not in` when `negated`."""

    item: ExprNode
    options: tuple[ExprNode, ...]
    negated: bool
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class Call:
    """`len(s)`, `abs(x)`, `min(x, y, ...)`, `max(x, y, ...)`, `str(x)`, or
    `starts_with(s, prefix)` / `ends_with(s, suffix)` (false for a null `s`)."""

    func: CallFunc
    args: tuple[ExprNode, ...]
    type: ValueType


@dataclass(frozen=True, slots=True)
class Matches:
    """`matches(text, 'pattern')`: whether the regular expression `pattern` (a literal,
    checked by RE2 when the chart compiles) is found anywhere in `text`; false for a
    null `text` (`statekit.compiler.expressions.text_functions`)."""

    text: ExprNode
    pattern: str
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class Now:
    """`now`: the step's clock reading, epoch milliseconds (`Chart.send(..., now_ms=)`)."""

    type: ValueType = INTEGER


@dataclass(frozen=True, slots=True)
class InstanceId:
    """`instance.id`: the ID of the instance being stepped, a string
    (`Chart.send(..., instance_id=)`; `statekit.compiler.expressions.instance_reading`);
    with `field` "processors", `instance.processors`, a record made from that ID
    (`statekit.compiler.expressions.processors`)."""

    type: ValueType = STRING
    field: str = "id"


@dataclass(frozen=True, slots=True)
class Format:
    """`format('inv-{}', x, ...)`: `pieces` are the template's text between its `{}`
    placeholders (escapes resolved), one more than `args`; each argument is written as
    `str()` writes it."""

    template: str
    pieces: tuple[str, ...]
    args: tuple[ExprNode, ...]
    type: ValueType = STRING


@dataclass(frozen=True, slots=True)
class IsNone:
    """`operand is None`, or `is not None` when `negated`."""

    operand: ExprNode
    negated: bool
    type: ValueType = BOOLEAN


@dataclass(frozen=True, slots=True)
class TableRead:
    """`tables.<name>[key]`: the entry of a declared table for the key's value.

    The checker proves the read cannot miss (every key value has an entry, or the table
    has a `default`). Equality and hashing use the table's name, not its entries.
    """

    table: str
    key: ExprNode
    type: ValueType
    lookup: LookupTable = field(compare=False, repr=False)


ExprNode: TypeAlias = (
    Literal
    | ContextRef
    | EventRef
    | Active
    | Not
    | BoolOp
    | Compare
    | BinOp
    | UnaryOp
    | IfExp
    | InList
    | Call
    | IsNone
    | TableRead
    | Now
    | InstanceId
    | Format
    | EventMeta
    | Index
    | FieldRead
    | RecordWith
    | Contains
    | ListDisplay
    | LocalRef
    | Matches
)


def children(node: ExprNode) -> tuple[ExprNode, ...]:
    """The direct sub-expressions of `node`, in evaluation order."""
    match node:
        case Literal() | ContextRef() | EventRef() | Active() | Now() | EventMeta() | LocalRef():
            return ()
        case InstanceId():
            return ()
        case Not(operand=x) | UnaryOp(operand=x) | IsNone(operand=x):
            return (x,)
        case TableRead(key=key):
            return (key,)
        case BoolOp(values=values):
            return values
        case Compare(left=left, comparators=comparators):
            return (left, *comparators)
        case BinOp(left=left, right=right):
            return (left, right)
        case IfExp(test=test, body=body, orelse=orelse):
            return (test, body, orelse)
        case InList(item=item, options=options):
            return (item, *options)
        case Call(args=args) | Format(args=args):
            return args
        case Index(value=value, index=index):
            return (value, index)
        case FieldRead(value=value) | Matches(text=value):
            return (value,)
        case RecordWith(record=record, value=value):
            return (record, value)
        case Contains(item=item, container=container):
            return (item, container)
        case ListDisplay(elements=elements):
            return elements


def iter_nodes(node: ExprNode) -> Iterator[ExprNode]:
    """Every node of the tree rooted at `node`, in pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def tree_to_json(node: ExprNode) -> dict[str, object]:
    """The canonical JSON form of a tree: `{"kind": ..., <fields>..., "type": ...}`."""
    out: dict[str, object]
    match node:
        case Literal(value=value):
            out = {"kind": "literal", "value": value}
        case ContextRef(field=name):
            out = {"kind": "ctx", "field": name}
        case EventRef(field=name):
            out = {"kind": "event", "field": name}
        case Active(state_id=state_id, ref=ref):
            out = {"kind": "active", "state": state_id, "ref": ref}
        case Not(operand=x):
            out = {"kind": "not", "operand": tree_to_json(x)}
        case BoolOp(op=op, values=values):
            out = {"kind": "boolop", "op": op, "values": [tree_to_json(v) for v in values]}
        case Compare(left=left, ops=ops, comparators=comparators):
            out = {
                "kind": "compare",
                "left": tree_to_json(left),
                "ops": list(ops),
                "comparators": [tree_to_json(c) for c in comparators],
            }
        case BinOp(op=op, left=left, right=right):
            out = {"kind": "binop", "op": op, "left": tree_to_json(left)}
            out["right"] = tree_to_json(right)
        case UnaryOp(op=op, operand=x):
            out = {"kind": "unaryop", "op": op, "operand": tree_to_json(x)}
        case IfExp(test=test, body=body, orelse=orelse):
            out = {"kind": "if", "test": tree_to_json(test), "body": tree_to_json(body)}
            out["orelse"] = tree_to_json(orelse)
        case InList(item=item, options=options, negated=negated):
            out = {"kind": "in", "item": tree_to_json(item), "negated": negated}
            out["options"] = [tree_to_json(o) for o in options]
        case Call(func=func, args=args):
            out = {"kind": "call", "func": func, "args": [tree_to_json(a) for a in args]}
        case IsNone(operand=x, negated=negated):
            out = {"kind": "is_none", "operand": tree_to_json(x), "negated": negated}
        case TableRead(table=table, key=key):  # the entries are in the chart's `tables`
            out = {"kind": "table", "table": table, "key": tree_to_json(key)}
        case Now():  # new kinds: no tree of an existing chart changes, nor its digest
            out = {"kind": "now"}
        case InstanceId(field=field):
            out = {"kind": "instance_id"}
            if field != "id":  # (the digest of a chart reading `instance.id` is kept)
                out["field"] = field
        case Format(template=template, args=args):
            out = {"kind": "format", "template": template}
            out["args"] = [tree_to_json(a) for a in args]
        case EventMeta(field=name):
            out = {"kind": "event_meta", "field": name}
        case Index(value=value, index=index):
            out = {"kind": "index", "value": tree_to_json(value), "index": tree_to_json(index)}
        case FieldRead(value=value, name=name):
            out = {"kind": "field", "value": tree_to_json(value), "name": name}
        case RecordWith(record=record, name=name, value=value):
            out = {"kind": "record_with", "record": tree_to_json(record), "name": name}
            out["value"] = tree_to_json(value)
        case Contains(item=item, container=container, negated=negated):
            out = {"kind": "contains", "item": tree_to_json(item), "negated": negated}
            out["container"] = tree_to_json(container)
        case ListDisplay(elements=elements):
            out = {"kind": "list", "elements": [tree_to_json(e) for e in elements]}
        case LocalRef(name=name):
            out = {"kind": "local", "name": name}
        case Matches(text=text, pattern=pattern):
            out = {"kind": "matches", "text": tree_to_json(text), "pattern": pattern}
    out["type"] = node.type.to_json()
    return out

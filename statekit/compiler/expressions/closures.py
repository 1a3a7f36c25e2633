"""The one-time compilation of a checked expression tree into closures.

`statekit.compiler.expressions` checks an expression's Python AST against the
allow-list and the declared types, and builds the tree defined here: small
frozen dataclasses, one per construct of the expression language, each
carrying its inferred `ValueType`. The tree is the expression's meaning as
data: `tree_to_json` serialises it canonically, `iter_nodes` walks it for
static analysis.

`compile_tree` turns a checked tree into nested Python closures, once, at
chart compile time. No text is ever evaluated: each node becomes a closure
over its children's closures, and the hot shapes are specialised so that they
run without generic dispatch (`ctx.x <= 3` is `lambda c, e, a: c["x"] <= 3`,
`active('s')` is `lambda c, e, a: 7 in a`). Every evaluator has the signature
`(ctx, event_payload, active_state_ids) -> value`.

Runtime contract: the engine passes a context and a payload that conform to
their declarations (the payload is validated before any guard runs), so a
well-typed tree cannot meet a missing key or a wrongly typed value. What can
happen is arithmetic failure: division or modulo by zero (`ZeroDivisionError`)
and float overflow (`OverflowError`). Both are `ArithmeticError`s; evaluators
let them propagate and the engine classifies them. Evaluation order and
short-circuiting are Python's: `and`/`or` and chained comparisons stop early,
a conditional evaluates one branch, `x in [a, b]` evaluates every option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from statekit.compiler.expressions.clock import read_clock
from statekit.compiler.expressions.evaluator import Evaluator
from statekit.compiler.expressions.event_meta import META_INDEX, EventPayload
from statekit.compiler.expressions.instance_reading import read_instance_id
from statekit.compiler.expressions.operator_closures import (
    COMPARE_FUNCS,
    FLIPPED,
    arith_ctx_lit,
    arith_ev_lit,
    arith_fn_fn,
    arith_fn_lit,
    cmp_ctx_fn,
    cmp_ctx_lit,
    cmp_ev_ctx,
    cmp_ev_fn,
    cmp_ev_lit,
    cmp_fn_fn,
    cmp_fn_lit,
)
from statekit.compiler.expressions.processors import processors_value
from statekit.compiler.expressions.text_functions import ends_with, pattern_search, starts_with
from statekit.compiler.expressions.tree import (
    Active,
    ArithOp,
    BinOp,
    BoolOp,
    Call,
    Compare,
    CompareOp,
    Contains,
    ContextRef,
    EventMeta,
    EventRef,
    ExprNode,
    FieldRead,
    Format,
    IfExp,
    Index,
    InList,
    InstanceId,
    IsNone,
    ListDisplay,
    Literal,
    LocalRef,
    Matches,
    Not,
    Now,
    RecordWith,
    TableRead,
    UnaryOp,
)


def compile_tree(node: ExprNode) -> Evaluator:
    """Compile a checked tree into one evaluator (nested closures, specialised by shape)."""
    match node:
        case Literal(value=value):
            return lambda c, e, a: value
        case ContextRef(field=f):
            return lambda c, e, a: c[f]
        case EventRef(field=f):
            return lambda c, e, a: e[f]
        case EventMeta(field=f, type=t):
            return _event_meta(META_INDEX[f], t.nullable)
        case Index(value=value, index=index):
            fv, fi = compile_tree(value), compile_tree(index)
            return lambda c, e, a: _element(fv(c, e, a), fi(c, e, a))
        case FieldRead(value=value, name=name):
            fv = compile_tree(value)
            return lambda c, e, a: fv(c, e, a)[name]
        case RecordWith(record=record, name=name, value=value):
            fr, fv = compile_tree(record), compile_tree(value)
            return lambda c, e, a: fr(c, e, a).replaced(name, fv(c, e, a))
        case Contains(item=item, container=container, negated=negated):
            fx, fc = compile_tree(item), compile_tree(container)
            if negated:
                return lambda c, e, a: _not_in(fx(c, e, a), fc(c, e, a))
            return lambda c, e, a: _in(fx(c, e, a), fc(c, e, a))
        case ListDisplay(elements=elements):
            fs = tuple(compile_tree(x) for x in elements)
            return lambda c, e, a: [f(c, e, a) for f in fs]
        case LocalRef(name=name):
            return _local(name)
        case Active(state_id=sid):
            return lambda c, e, a: sid in a
        case Not(operand=Active(state_id=sid)):
            return lambda c, e, a: sid not in a
        case Not(operand=x):
            fx = compile_tree(x)
            return lambda c, e, a: not fx(c, e, a)
        case BoolOp(op=op, values=values):
            return _bool_op(op, tuple(compile_tree(v) for v in values))
        case Compare(left=left, ops=(op,), comparators=(right,)):
            return _compare(op, left, right)
        case Compare(left=left, ops=ops, comparators=comparators):
            return _chained_compare(left, ops, comparators)
        case BinOp(op=op, left=left, right=right):
            return _arith(op, left, right)
        case UnaryOp(op="-", operand=x):
            fx = compile_tree(x)
            return lambda c, e, a: -fx(c, e, a)
        case UnaryOp(operand=x):
            fx = compile_tree(x)
            return lambda c, e, a: +fx(c, e, a)
        case IfExp(test=test, body=body, orelse=orelse):
            ft, fb, fo = compile_tree(test), compile_tree(body), compile_tree(orelse)
            return lambda c, e, a: fb(c, e, a) if ft(c, e, a) else fo(c, e, a)
        case InList(item=item, options=options, negated=negated):
            return _in_list(item, options, negated)
        case Call(func=func, args=args):
            return _call(func, tuple(compile_tree(x) for x in args))
        case IsNone(operand=x, negated=negated):
            return _is_none(x, negated)
        case TableRead(key=key, lookup=table):
            return _table_read(key, table.index(), table.default, table.has_default)
        case Now():
            return lambda c, e, a: read_clock()
        case InstanceId(field="id"):
            return lambda c, e, a: read_instance_id()
        case InstanceId():  # `instance.processors`
            return lambda c, e, a: processors_value(read_instance_id())
        case Format(pieces=pieces, args=args):
            return _format(pieces, tuple(compile_tree(x) for x in args))
        case Matches(text=text, pattern=pattern):
            ft, found_in = compile_tree(text), pattern_search(pattern)
            return lambda c, e, a: found_in(ft(c, e, a))


def _element(values: list[Any], index: int) -> Any:
    """`values[index]` from 0; a negative index fails as one past the end does."""
    if index < 0:
        raise IndexError(f"list index {index} is negative")
    return values[index]


def _in(item: Any, values: list[Any] | str) -> bool:
    """Membership as `==` compares in expressions (True is not 1, 1 is 1.0); in a string,
    a substring."""
    if values.__class__ is str:
        return item in values
    return any(v == item and (v.__class__ is bool) is (item.__class__ is bool) for v in values)


def _not_in(item: Any, values: list[Any] | str) -> bool:
    return not _in(item, values)


def _event_meta(index: int, nullable: bool) -> Evaluator:
    """Reads field `index` of the event's `meta`: the engine evaluates the expressions of
    a chart that reads `_event` with an `EventPayload` (see `event_meta`). Where no event
    is bound (the start's entry), a `nullable` read is null; any other fails."""

    def read(c: Mapping[str, Any], e: Mapping[str, Any], a: AbstractSet[int]) -> Any:
        if isinstance(e, EventPayload) and e.meta is not None:
            return e.meta[index]
        if nullable:
            return None
        raise LookupError("_event is read where the event is not known")

    return read


def _local(name: str) -> Evaluator:
    """Reads a `foreach` local: the engine evaluates a body's expressions with an
    `EventPayload` carrying them (see `event_meta.with_locals`)."""

    def read(c: Mapping[str, Any], e: Mapping[str, Any], a: AbstractSet[int]) -> Any:
        if isinstance(e, EventPayload):
            return e.locals[name]
        raise LookupError(f"the foreach local {name} is read outside its body")

    return read


def _bool_op(op: str, fs: tuple[Evaluator, ...]) -> Evaluator:
    if len(fs) == 2:
        x, y = fs
        if op == "and":
            return lambda c, e, a: x(c, e, a) and y(c, e, a)
        return lambda c, e, a: x(c, e, a) or y(c, e, a)
    if len(fs) == 3:
        x, y, z = fs
        if op == "and":
            return lambda c, e, a: x(c, e, a) and y(c, e, a) and z(c, e, a)
        return lambda c, e, a: x(c, e, a) or y(c, e, a) or z(c, e, a)
    stop_on = op == "or"  # `or` stops at the first true value, `and` at the first false one

    def run(c: Mapping[str, Any], e: Mapping[str, Any], a: AbstractSet[int]) -> Any:
        value: Any = not stop_on
        for f in fs:
            value = f(c, e, a)
            if bool(value) is stop_on:
                return value
        return value

    return run


def _compare(op: CompareOp, left: ExprNode, right: ExprNode) -> Evaluator:
    """One comparison, specialised for a reference or a literal on either side."""
    # Normalise so that a literal, or failing that an event field, is on the right side.
    if isinstance(left, Literal) and not isinstance(right, Literal):
        left, right, op = right, left, FLIPPED[op]
    if isinstance(right, EventRef) and not isinstance(left, EventRef | Literal):
        left, right, op = right, left, FLIPPED[op]
    if isinstance(right, Literal):
        k = right.value
        if isinstance(left, ContextRef):
            return cmp_ctx_lit(left.field, k)[op]
        if isinstance(left, EventRef):
            return cmp_ev_lit(left.field, k)[op]
        return cmp_fn_lit(compile_tree(left), k)[op]
    # A reference on the right of a computed side goes to the left (it cannot raise, so
    # the order is not observable): `ctx.count + event.n <= ctx.limit` is then one
    # call fewer (bench/xstate_peer.py, guarded chart; see `_arith`).
    if isinstance(right, ContextRef | EventRef) and not isinstance(left, ContextRef | EventRef):
        left, right, op = right, left, FLIPPED[op]
    if isinstance(left, EventRef):
        if isinstance(right, ContextRef):
            return cmp_ev_ctx(left.field, right.field)[op]
        return cmp_ev_fn(left.field, compile_tree(right))[op]
    if isinstance(left, ContextRef):
        return cmp_ctx_fn(left.field, compile_tree(right))[op]
    return cmp_fn_fn(compile_tree(left), compile_tree(right))[op]


def _chained_compare(
    left: ExprNode, ops: tuple[CompareOp, ...], comparators: tuple[ExprNode, ...]
) -> Evaluator:
    first = compile_tree(left)
    steps = tuple(
        (COMPARE_FUNCS[op], compile_tree(x)) for op, x in zip(ops, comparators, strict=True)
    )

    def run(c: Mapping[str, Any], e: Mapping[str, Any], a: AbstractSet[int]) -> Any:
        x = first(c, e, a)
        result: Any = True
        for compare, g in steps:
            y = g(c, e, a)
            result = compare(x, y)
            if not result:
                return result
            x = y
        return result

    return run


def _arith(op: ArithOp, left: ExprNode, right: ExprNode) -> Evaluator:
    """One arithmetic operation, specialised for `<ref> op <literal>`."""
    if isinstance(right, Literal):
        k = right.value
        if isinstance(left, ContextRef):
            return arith_ctx_lit(left.field, k)[op]
        if isinstance(left, EventRef):
            return arith_ev_lit(left.field, k)[op]
        return arith_fn_lit(compile_tree(left), k)[op]
    # `ctx.a + event.b` (an assign's usual shape) as one closure over two look-ups, not
    # three calls: bench/xstate_peer.py's guarded chart runs one in its guard and one in
    # its assign per event (with the flip in `_compare`, 5 of its 11 calls per event)
    refs = (ContextRef, EventRef)
    if isinstance(left, refs) and isinstance(right, refs):
        return _arith_ref_ref(left, right)[op]
    return arith_fn_fn(compile_tree(left), compile_tree(right))[op]


def _arith_ref_ref(
    left: ContextRef | EventRef, right: ContextRef | EventRef
) -> dict[ArithOp, Evaluator]:
    """`<ref> op <ref>`, each side read from the context or the payload."""
    f, g = left.field, right.field
    if isinstance(left, ContextRef) and isinstance(right, EventRef):
        return {
            "+": lambda c, e, a: c[f] + e[g],
            "-": lambda c, e, a: c[f] - e[g],
            "*": lambda c, e, a: c[f] * e[g],
            "/": lambda c, e, a: c[f] / e[g],
            "//": lambda c, e, a: c[f] // e[g],
            "%": lambda c, e, a: c[f] % e[g],
            "**": lambda c, e, a: c[f] ** e[g],
        }
    if isinstance(left, ContextRef):  # both from the context
        return {
            "+": lambda c, e, a: c[f] + c[g],
            "-": lambda c, e, a: c[f] - c[g],
            "*": lambda c, e, a: c[f] * c[g],
            "/": lambda c, e, a: c[f] / c[g],
            "//": lambda c, e, a: c[f] // c[g],
            "%": lambda c, e, a: c[f] % c[g],
            "**": lambda c, e, a: c[f] ** c[g],
        }
    x, y = compile_tree(left), compile_tree(right)  # the payload on the left: rarer
    return arith_fn_fn(x, y)


def _in_list(item: ExprNode, options: tuple[ExprNode, ...], negated: bool) -> Evaluator:
    if all(isinstance(o, Literal) for o in options):
        values = frozenset(o.value for o in options if isinstance(o, Literal))
        match item, negated:
            case ContextRef(field=f), False:
                return lambda c, e, a: c[f] in values
            case ContextRef(field=f), True:
                return lambda c, e, a: c[f] not in values
            case EventRef(field=f), False:
                return lambda c, e, a: e[f] in values
            case EventRef(field=f), True:
                return lambda c, e, a: e[f] not in values
        fx = compile_tree(item)
        if negated:
            return lambda c, e, a: fx(c, e, a) not in values
        return lambda c, e, a: fx(c, e, a) in values
    fx = compile_tree(item)
    fs = tuple(compile_tree(o) for o in options)
    if negated:
        return lambda c, e, a: fx(c, e, a) not in [f(c, e, a) for f in fs]
    return lambda c, e, a: fx(c, e, a) in [f(c, e, a) for f in fs]


def _is_none(x: ExprNode, negated: bool) -> Evaluator:
    match x, negated:
        case ContextRef(field=f), False:
            return lambda c, e, a: c[f] is None
        case ContextRef(field=f), True:
            return lambda c, e, a: c[f] is not None
        case EventRef(field=f), False:
            return lambda c, e, a: e[f] is None
        case EventRef(field=f), True:
            return lambda c, e, a: e[f] is not None
    fx = compile_tree(x)
    if negated:
        return lambda c, e, a: fx(c, e, a) is not None
    return lambda c, e, a: fx(c, e, a) is None


def written(value: Any) -> str:
    """How `str()` and `format()` write a value: booleans as `true`/`false`, integers in
    decimal, strings as they are. An integer of more than 4,300 digits (only an
    intermediate `**` can make one) raises `ValueError`, which the engine classifies."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _format(pieces: tuple[str, ...], fs: tuple[Evaluator, ...]) -> Evaluator:
    first, rest = pieces[0], tuple(zip(fs, pieces[1:], strict=True))

    def run(c: Mapping[str, Any], e: Mapping[str, Any], a: AbstractSet[int]) -> Any:
        out = [first]
        for f, piece in rest:
            out.append(written(f(c, e, a)))
            out.append(piece)
        return "".join(out)

    return run


_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "abs": abs,
    "min": min,
    "max": max,
    "str": written,
    "starts_with": starts_with,
    "ends_with": ends_with,
}


def _call(func: str, fs: tuple[Evaluator, ...]) -> Evaluator:
    builtin = _BUILTINS[func]
    if len(fs) == 1:
        (x,) = fs
        return lambda c, e, a: builtin(x(c, e, a))
    if len(fs) == 2:
        x, y = fs
        return lambda c, e, a: builtin(x(c, e, a), y(c, e, a))
    return lambda c, e, a: builtin([f(c, e, a) for f in fs])


def _table_read(key: ExprNode, table: dict[Any, Any], default: Any, has_default: bool) -> Evaluator:
    """One dictionary look-up (the table's one shared dictionary). The checker proved that
    a read without a default cannot miss (the key's type has only listed values), so it
    indexes; with one, `get`."""
    if has_default:
        match key:
            case ContextRef(field=f):
                return lambda c, e, a: table.get(c[f], default)
            case EventRef(field=f):
                return lambda c, e, a: table.get(e[f], default)
        fk = compile_tree(key)
        return lambda c, e, a: table.get(fk(c, e, a), default)
    match key:
        case ContextRef(field=f):
            return lambda c, e, a: table[c[f]]
        case EventRef(field=f):
            return lambda c, e, a: table[e[f]]
        case Literal(value=k):
            value = table[k]
            return lambda c, e, a: value
    fk = compile_tree(key)
    return lambda c, e, a: table[fk(c, e, a)]

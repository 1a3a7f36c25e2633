"""statekit expressions written in python-statemachine's `python` datamodel (SCXML out).

python-statemachine 3 evaluates an SCXML document's `cond`/`expr` with its
restricted evaluator (an AST allow-list, `statemachine.spec_parser.parse_expr`):
names (a `<data>` of the document, or `_event`), constants, `and`/`or`/`not`,
comparisons, arithmetic, list literals, subscripts, attribute reads and the one
call `In('id')`. Each node of a statekit expression tree is written in that
subset with the same value:

- `ctx.f` → `f` (a `<data id="f">`), `event.f` → `_event.data.f`,
  `active('s')` → `In('<id of s>')`;
- `x in [a, b]` → `(x == a or x == b)`, `x is None` → `(x == None)`;
- `b if t else o` → `(t and [b] or [o])[0]` (the one-element lists are always
  true, so the branch taken is the one Python's conditional takes, and only it
  is evaluated); `abs`, `min`, `max` and table reads are written as such
  conditionals;
- `len`, `str`, `format` and `now` have no equivalent (no other call, no clock):
  `NotExportable`, naming them.

A condition goes through psm's `normalize_cond` first (it unescapes XML entities
and rewrites `true`/`false`/`null`, `===`, `&&`, `||` anywhere in the text):
string literals that hold any of those are written with `\\u` escapes, which
`normalize_cond` leaves alone and Python reads back as the same text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from statekit.compiler.expressions.lookup_table import TableKey, TableValue
from statekit.compiler.expressions.tree import (
    Active,
    BinOp,
    BoolOp,
    Call,
    Compare,
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
    LiteralValue,
    LocalRef,
    Matches,
    Not,
    Now,
    RecordWith,
    TableRead,
    UnaryOp,
)

MAX_TEXT = 100_000
"""Longest expression text written: `min`/`max` of many arguments repeat them."""

_NORMALIZED = re.compile(r"\b(?:true|false|null)\b|===|!==|&&|\|\||&[a-zA-Z#]")
"""What psm's `normalize_cond` would change inside a string literal (its own pattern, and
the entities `html.unescape` reads)."""


class NotExportable(ValueError):
    """A construct with no faithful equivalent in the target datamodel; the message names it."""


XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def check_xml_text(text: str, what: str) -> None:
    """`NotExportable` when `text` holds a character XML 1.0 cannot represent."""
    bad = XML_FORBIDDEN.search(text)
    if bad is not None:
        raise NotExportable(f"{what} holds {bad.group()!r}, which XML 1.0 cannot represent")


@dataclass(frozen=True)
class Spelling:
    """How the document names a state (by IR id) and a context field (its `<data>` id)."""

    state_id: Callable[[int], str]
    data: Mapping[str, str]
    done_events: tuple[str, ...] = ()
    """The `done.state.<id>` events the document can raise (statekit's type: platform)."""


def python_expression(node: ExprNode, spelling: Spelling, *, conjunct: bool = False) -> str:
    """`node` as text psm's restricted python datamodel evaluates to the same value;
    `conjunct`: the text is one operand of an `and` (parenthesised when it needs it)."""
    text = _at(node, spelling, _NOT) if conjunct else _write(node, spelling)
    if len(text) > MAX_TEXT:
        raise NotExportable(f"the expression written out is over {MAX_TEXT} characters")
    return text


def literal(value: LiteralValue) -> str:
    """A Python literal for `value` that survives psm's condition normalisation."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int | float):
        return repr(value)
    if not isinstance(value, str):
        raise NotExportable("a list value (lists and foreach are not exported yet)")
    check_xml_text(value, f"the string {value!r}")
    if _NORMALIZED.search(value):
        return '"' + "".join(f"\\U{ord(c):08x}" for c in value) + '"'
    for quote in "'\"":  # as written when it can be (import-scxml reads no escapes)
        if not set(value) & {quote, "\\", "\n", "\r"}:
            return quote + value + quote
    return repr(value)


_ATOM, _POWER, _UNARY, _TERM, _SUM, _COMPARE, _NOT, _AND, _OR = 9, 8, 7, 6, 5, 4, 3, 2, 1
_BINARY = {"+": _SUM, "-": _SUM, "*": _TERM, "/": _TERM, "//": _TERM, "%": _TERM, "**": _POWER}


def _precedence(node: ExprNode) -> int:
    """How tightly the text `_write` gives `node` binds (Python's operator precedence), so
    parentheses are written only where Python needs them (the text stays the source's)."""
    match node:
        case BoolOp(op=op):
            return _OR if op == "or" else _AND
        case Not():
            return _NOT
        case Compare() | IsNone():
            return _COMPARE
        case InList(options=options, negated=negated):
            if len(options) == 1:
                return _COMPARE
            return _ATOM if not options else (_AND if negated else _OR)
        case BinOp(op=op):
            return _BINARY[op]
        case UnaryOp():
            return _UNARY
        case Literal(value=value) if isinstance(value, int | float) and value < 0:
            return _UNARY
        case _:
            return _ATOM


def _at(node: ExprNode, sid: Spelling, minimum: int) -> str:
    text = _write(node, sid)
    return f"({text})" if _precedence(node) < minimum else text


def _write(node: ExprNode, sid: Spelling) -> str:
    match node:
        case Literal(value=value):
            return literal(value)
        case ContextRef(field=name):
            return sid.data[name]
        case EventRef(field=name):
            return f"_event.data.{name}"
        case EventMeta(field="type") if sid.done_events:
            done = " or ".join(f"{_EVENT_NAME} == {literal(e)}" for e in sid.done_events)
            return _choose(f"({done})", literal("platform"), "_event.type")
        case EventMeta(field="sendid" | "origintype" as name):
            raise NotExportable(f"_event.{name} (not exported yet)")
        case EventMeta(field=name):
            return _EVENT_META[name]
        case Active(state_id=state):
            return f"In({literal(sid.state_id(state))})"
        case Not(operand=operand):
            return f"not {_at(operand, sid, _NOT)}"
        case BoolOp(op=op, values=values):
            own = _precedence(node)
            return f" {op} ".join(_at(v, sid, own + 1) for v in values)
        case Compare(left=left, ops=ops, comparators=comparators):
            parts = [_at(left, sid, _SUM)]
            for symbol, right in zip(ops, comparators, strict=True):
                parts += [symbol, _at(right, sid, _SUM)]
            return " ".join(parts)
        case BinOp(op=op, left=left, right=right):
            own = _BINARY[op]
            # left-associative, but `**` is right-associative and binds tighter than unary
            left_min, right_min = (own + 1, own) if op == "**" else (own, own + 1)
            return f"{_at(left, sid, left_min)} {op} {_at(right, sid, right_min)}"
        case UnaryOp(op=op, operand=operand):
            return f"{op}{_at(operand, sid, _UNARY)}"
        case IfExp(test=test, body=body, orelse=orelse):
            return _choose(_at(test, sid, _NOT), _write(body, sid), _write(orelse, sid))
        case InList(item=item, options=options, negated=negated):
            return _membership(_at(item, sid, _SUM), [_at(o, sid, _SUM) for o in options], negated)
        case IsNone(operand=operand, negated=negated):
            return f"{_at(operand, sid, _SUM)} {'!=' if negated else '=='} None"
        case Call(func=func, args=args):
            return _call(func, [_at(a, sid, _SUM) for a in args])
        case TableRead(lookup=table, key=key):
            return _table(_at(key, sid, _SUM), table.index(), table.default, table.has_default)
        case Now():
            raise NotExportable("`now` (SCXML's datamodel has no clock reading)")
        case InstanceId(field="id"):
            raise NotExportable("`instance.id` (not exported as _sessionid yet)")
        case InstanceId():
            raise NotExportable("`instance.processors` (not exported as _ioprocessors yet)")
        case Format():
            raise NotExportable("format() (no call but In() in psm's datamodel)")
        case Matches():
            raise NotExportable("matches() (no call but In() in psm's datamodel)")
        case Contains(container=text) if text.type.base.value == "string":
            raise NotExportable("a substring test ('text' in a string) is not exported yet")
        case Index() | Contains() | ListDisplay() | LocalRef():
            raise NotExportable("a list value (lists and foreach are not exported yet)")
        case FieldRead() | RecordWith():
            raise NotExportable("a record value (records are not exported yet)")


_EVENT_NAME = "(_event.name + '')"
_EVENT_META = {
    "name": _EVENT_NAME,
    "type": "_event.type",
    "origin": "(_event.origin or None)",
    "invokeid": "(_event.invokeid or None)",
}
"""`_event.<field>` in psm: its name is an `Event` (a `str` that equals no plain string:
`+ ''` makes it one); it leaves origin and invokeid blank (`""`) where statekit's are
null; a `done.state.<id>` is `internal` to psm, `platform` to statekit."""


def _choose(test: str, body: str, orelse: str) -> str:
    """`body if test else orelse` where `test` binds at least as `not` does."""
    return f"({test} and [{body}] or [{orelse}])[0]"


def _membership(item: str, options: list[str], negated: bool) -> str:
    if not options:
        return "True" if negated else "False"
    op, joiner = ("!=", " and ") if negated else ("==", " or ")
    return joiner.join(f"{item} {op} {option}" for option in options)


def _call(func: str, args: list[str]) -> str:
    """abs/min/max of arguments that bind at least as `+` does."""
    if func == "abs":
        return _choose(f"{args[0]} >= 0", args[0], f"-({args[0]})")
    if func in ("min", "max"):
        # Python's min/max keep the first of equal values: a later one wins only if strictly better
        better = "<" if func == "min" else ">"
        best = args[0]
        for arg in args[1:]:
            best = _choose(f"{arg} {better} {best}", arg, best)
        return best
    raise NotExportable(f"{func}() (no call but In() in psm's datamodel)")


def _table(
    key: str, entries: Mapping[TableKey, TableValue], default: TableValue | None, has_default: bool
) -> str:
    items = list(entries.items())
    # without a default the compiler proved the read never misses: the last entry is the one left
    fallback = literal(default) if has_default else literal(items.pop()[1])
    text = f"[{fallback}]"
    for entry_key, value in reversed(items):
        text = f"({key} == {literal(entry_key)} and [{literal(value)}] or {text})"
    return f"{text}[0]"

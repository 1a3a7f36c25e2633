"""The type of a `<data>` that is always null: that of what the document compares it with.

A `<data>` nothing gives a value (none at the start, no write), or one given only the
values of such `<data>` (`<data id="Var2" expr="Var1"/>` bound late, `Var2 = Var1`),
holds null whenever it is read. Its type says nothing about its value; it only decides
which reads compile. statekit's compiler refuses a comparison that can never hold
(`ctx.Var2 == 1` on a string), so such a `<data>` takes the type of the literal a
condition of the document compares it with (`Var2 == 1`: an integer), passed along
comparisons between two such `<data>` (`Var1 == Var2`); with none, or literals of two
types, it is a string. The comparison then evaluates as SCXML's does: null equals no
literal (test280 reads an unbound `<data>` so).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from statekit.compiler.value_types import BaseType, ValueType
from statekit.scxml.document import Element

_NAME = r"(?<![\w.$'\"])([A-Za-z_][A-Za-z0-9_]*)(?![\w.(\[$])"
_LITERAL = r"(-?\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"|true|false|True|False)"
_OPERATOR = r"\s*(?:===|!==|==|!=|<=|>=|<|>)\s*"
_NAME_LITERAL = re.compile(_NAME + _OPERATOR + _LITERAL + r"(?![\w.])")
_LITERAL_NAME = re.compile(r"(?<![\w.])" + _LITERAL + _OPERATOR + _NAME)
_NAME_NAME = re.compile(_NAME + _OPERATOR + _NAME)
_CONDITIONS = ("transition", "if", "elseif")
_OPAQUE = ("content", "donedata")


def compared_types(root: Element) -> dict[str, ValueType]:
    """Each name a condition of the document compares with a literal of one type, or
    with such a name: that type (nullable)."""
    found: dict[str, set[BaseType]] = {}
    pairs: list[tuple[str, str]] = []
    for text in _conditions(root):
        for name, value in _NAME_LITERAL.findall(text):
            found.setdefault(name, set()).add(_literal_base(value))
        for value, name in _LITERAL_NAME.findall(text):
            found.setdefault(name, set()).add(_literal_base(value))
        pairs.extend(_NAME_NAME.findall(text))
    types = {name: bases.pop() for name, bases in found.items() if len(bases) == 1}
    for _ in range(len(pairs)):  # along name == name, to a fixed point
        grown = False
        for left, right in pairs:
            for one, other in ((left, right), (right, left)):
                if one in types and other not in types and other not in found:
                    types[other] = types[one]
                    grown = True
        if not grown:
            break
    return {name: ValueType(base, nullable=True) for name, base in types.items()}


def always_null(
    untyped: Iterable[str],
    writes: Iterable[tuple[str, str | None]],
    never_written: Callable[[str], bool],
) -> set[str]:
    """The names of `untyped` (`<data>` without a value) that hold null whenever they
    are read: never written, or written (`writes`: location, expression) only the
    value of another such name."""
    names = set(untyped)
    null = {name for name in names if never_written(name)}
    by_name: dict[str, list[str | None]] = {}
    for location, expr in writes:
        if location in names:
            by_name.setdefault(location, []).append(expr)
    grown = True
    while grown:
        grown = False
        for name, exprs in by_name.items():
            if name not in null and all(e is not None and e.strip() in null for e in exprs):
                null.add(name)
                grown = True
    return null


def null_types(null: Iterable[str], compared: Mapping[str, ValueType]) -> dict[str, ValueType]:
    """The type each always-null name is declared with: the compared one, else a string."""
    string = ValueType(BaseType.STRING, nullable=True)
    return {name: compared.get(name, string) for name in null}


def _literal_base(text: str) -> BaseType:
    if text[0] in "'\"":
        return BaseType.STRING
    if text in ("true", "false", "True", "False"):
        return BaseType.BOOLEAN
    return BaseType.NUMBER if "." in text else BaseType.INTEGER


def _conditions(element: Element) -> Iterable[str]:
    for child in element.children:
        if child.tag in _CONDITIONS and "cond" in child.attrs:
            yield child.attrs["cond"]
        if child.tag not in _OPAQUE:
            yield from _conditions(child)

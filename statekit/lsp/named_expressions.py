"""Definitions (`define:`) and tables (`tables:`) as an expression names them: a bare name
is a definition's use, `tables.<name>` a table's; both feed the document's index."""

from __future__ import annotations

import ast
import functools
import re

from statekit.compiler.model.definitions import RESERVED_NAMES
from statekit.lsp.names import Kind, Role

Found = tuple[tuple[int, int], Kind, Role, str, str]
"""(line and column in the expression, kind, role, name, base): the base is `tables` for a
table read and empty for a bare name (`statekit.lsp.index` locates each in the file)."""


def named_uses(tree: ast.AST) -> list[Found]:
    """The definitions and tables an expression's tree names, in no particular order."""
    found: list[Found] = []
    for sub in ast.walk(tree):
        where = (getattr(sub, "lineno", 0), getattr(sub, "col_offset", 0))
        if isinstance(sub, ast.Name) and sub.id not in RESERVED_NAMES:
            found.append((where, Kind.DEFINITION, Role.DEFINED_NAME, sub.id, ""))
        elif (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "tables"
        ):
            found.append((where, Kind.TABLE, Role.TABLE_READ, sub.attr, "tables"))
    return found


@functools.lru_cache(maxsize=256)
def bare_name(name: str) -> re.Pattern[str]:
    """The pattern of `name` written bare: not after a `.` or a word character (a string
    literal holding the same word before the use would be taken for it: the search runs
    in the expression's order from the previous name found)."""
    return re.compile(rf"(?<![\w.])({re.escape(name)})\b")

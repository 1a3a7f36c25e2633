"""`x instanceof Array` (ECMAScript), a test of a `<data>`'s type, decided at import.

A statekit context field has one declared type, so whether its value is a list is
known before the chart runs: the test is `true` for a list field (`ctx.x is not
None` when it may be unset), `false` for any other. Only a declared `<data>` is
tested this way; anything else in front of `instanceof` is left to the expression
translation (which refuses it by name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from statekit.compiler.value_types import BaseType
from statekit.scxml.data_types import DataField

_INSTANCEOF_ARRAY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+instanceof\s+Array\s*$")


def instanceof_array(text: str, fields: Mapping[str, DataField]) -> str | None:
    """The statekit condition of `text` when it is `<data> instanceof Array`; else None."""
    match = _INSTANCEOF_ARRAY.match(text)
    data = fields.get(match.group(1)) if match else None
    if data is None:
        return None
    if data.type.base is not BaseType.LIST:
        return "false"
    return f"ctx.{data.name} is not None" if data.type.nullable else "true"


EVENT_FIELDS = frozenset({"name", "type", "sendid", "origin", "origintype", "invokeid", "data"})
"""The fields SCXML gives every `_event` (some of them unset: `hasattr` is still true)."""


def hasattr_event(tokens: list[tuple[str, str]], index: int) -> str | None:
    """`hasattr(_event, 'field')` starting at `tokens[index]`: `true` for a field every
    SCXML event has, `false` for another (decided at import); None for any other call."""
    words = [value for _, value in tokens[index : index + 6]]
    if words[:4] != ["hasattr", "(", "_event", ","] or words[5:6] != [")"]:
        return None
    if tokens[index + 4][0] != "string":
        return None
    return "true" if words[4][1:-1] in EVENT_FIELDS else "false"

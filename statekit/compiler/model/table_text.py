"""A lookup table's keys and values as a chart writes them, for people (`statekit diff`,
the docs pages): a duration as its shortest literal (`259200000` → `3d`), a string
quoted (`'low'`), anything else as canonical JSON (`3`, `true`, `null`)."""

from __future__ import annotations

from statekit.compiler.canonical import canonical_json
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.model.timers import format_delay


def key_text(key: object) -> str:
    """A key as a read of the table writes it: `'normal'`, `3`."""
    return repr(key) if isinstance(key, str) else canonical_json(key)


def value_text(table: LookupTable, value: object) -> str:
    """One entry's value as the chart writes it (`3d` for a duration, `'x'` for a string)."""
    if table.duration and isinstance(value, int) and not isinstance(value, bool):
        return format_delay(value)
    if isinstance(value, str):
        return repr(value)
    return canonical_json(value)


def value_type_text(table: LookupTable) -> str:
    """The type of the table's values: `duration` when declared so, else `integer`,
    `string`, `one of 'a', 'b'`."""
    return "duration" if table.duration else table.value.describe()

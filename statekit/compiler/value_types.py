"""Value types of context fields, event payload fields and expressions."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Final

INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1
"""The range of an integer value (a signed 64-bit integer), in a chart and at run time."""


def out_of_range(value: object) -> str | None:
    """Why a value a chart declares (a default, an enum value) cannot be stored and
    exchanged as JSON: an integer outside INT_MIN..INT_MAX, or a number that is not
    finite (JSON has no NaN or Infinity); None when it can."""
    if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        return "is outside the integer range -2^63 .. 2^63-1 (signed 64-bit)"
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number (JSON has no NaN or Infinity)"
    return None


class BaseType(enum.Enum):
    """The scalar types the DSL knows; `NULL` is only the type of the literal `None`/`null`."""

    INTEGER = "integer"
    NUMBER = "number"
    STRING = "string"
    BOOLEAN = "boolean"
    NULL = "null"
    LIST = "list"
    RECORD = "record"


@dataclass(frozen=True, slots=True)
class ValueType:
    """A declared or inferred type: a base type, nullability, and for enums the allowed values."""

    base: BaseType
    nullable: bool = False
    enum: tuple[str | int, ...] | None = None
    items: ValueType | None = None
    """The type of every element of a `list` (None for any other base type)."""
    fields: tuple[tuple[str, ValueType], ...] | None = None
    """The named, typed fields of a `record`, sorted by name (None for any other base type)."""

    def field(self, name: str) -> ValueType | None:
        """The type of the record field `name`, or None (no such field, or not a record)."""
        for field_name, field_type in self.fields or ():
            if field_name == name:
                return field_type
        return None

    @property
    def structured(self) -> bool:
        """Whether values of this type are lists or records (the analysis does not track
        their contents)."""
        return self.items is not None or self.fields is not None or self.base is BaseType.LIST

    def describe(self) -> str:
        """Human text for messages: `integer`, `string or null`, `one of 'user', 'support'`,
        `list of integer`."""
        text = (
            "one of " + ", ".join(repr(v) for v in self.enum)
            if self.enum is not None
            else f"list of {self.items.describe()}"
            if self.items is not None
            else "record {" + ", ".join(f"{n}: {t.describe()}" for n, t in self.fields) + "}"
            if self.fields is not None
            else self.base.value
        )
        return f"{text} or null" if self.nullable and self.base is not BaseType.NULL else text

    def accepts(self, value: object) -> bool:
        """Whether a runtime value conforms (`True` is not an integer; an integer is a number;
        a list's every element conforms to its item type)."""
        if value is None:
            return self.nullable or self.base is BaseType.NULL
        if self.items is not None:
            items = self.items
            return type(value) is list and all(items.accepts(v) for v in value)
        if self.fields is not None:
            return (
                isinstance(value, dict)
                and value.keys() == {n for n, _ in self.fields}
                and all(t.accepts(value[n]) for n, t in self.fields)
            )
        if self.enum is not None:
            return type(value) is type(self.enum[0]) and value in self.enum
        if self.base is BaseType.INTEGER:
            return type(value) is int
        if self.base is BaseType.NUMBER:
            return type(value) in (int, float)
        if self.base is BaseType.STRING:
            return type(value) is str
        if self.base is BaseType.BOOLEAN:
            return type(value) is bool
        return False

    def to_json(self) -> dict[str, object]:
        """Canonical JSON form (for `statekit compile` and the digest)."""
        out: dict[str, object] = {"type": self.base.value}
        if self.nullable:
            out["nullable"] = True
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.items is not None:
            out["items"] = self.items.to_json()
        if self.fields is not None:
            out["fields"] = {n: t.to_json() for n, t in self.fields}
        return out

    def problem_at(self, value: object, path: str = "") -> str | None:
        """Where and how `value` does not conform: `[2]: expected integer, got string` (the
        path of the first wrong element, empty for the value itself), or None."""
        if self.items is not None and type(value) is list:
            for index, item in enumerate(value):
                found = self.items.problem_at(item, f"{path}[{index}]")
                if found is not None:
                    return found
            return None
        if self.fields is not None and isinstance(value, dict):
            return record_problem(self.fields, value, path)
        if self.accepts(value):
            return None
        got = "list" if isinstance(value, list) else type(value).__name__
        names = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
        names.update(dict="mapping", Record="mapping")
        got = "null" if value is None else names.get(got, got)
        return f"{path}: expected {self.describe()}, got {got}" if path else None


def record_problem(
    fields: tuple[tuple[str, ValueType], ...], value: dict[object, object], path: str
) -> str | None:
    """Where a mapping does not conform to a record's fields: a missing or unknown field,
    or the first field whose value does not conform (`.address.city: expected string,
    got integer`); None when it conforms."""
    declared = {n for n, _ in fields}
    names = ", ".join(sorted(declared))
    for name, field_type in fields:
        if name not in value:
            return f"{path}: missing field '{name}' (fields: {names})"
        found = field_type.problem_at(value[name], f"{path}.{name}")
        if found is not None:
            return found
        if not field_type.accepts(value[name]):
            return f"{path}.{name}: expected {field_type.describe()}"
    unknown = sorted(repr(k) for k in value if k not in declared)
    if unknown:
        return f"{path}: unknown field(s) {', '.join(unknown)} (fields: {names})"
    return None


INTEGER = ValueType(base=BaseType.INTEGER)
NUMBER = ValueType(base=BaseType.NUMBER)
STRING = ValueType(base=BaseType.STRING)
BOOLEAN = ValueType(base=BaseType.BOOLEAN)
NULL = ValueType(base=BaseType.NULL, nullable=True)

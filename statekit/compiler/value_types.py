"""Value types of context fields, event payload fields and expressions."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Final

from statekit.compiler.source.nodes import Scalar

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


@dataclass(frozen=True, slots=True)
class ValueType:
    """A declared or inferred type: a base type, nullability, and for enums the allowed values."""

    base: BaseType
    nullable: bool = False
    enum: tuple[str | int, ...] | None = None

    def describe(self) -> str:
        """Human text for messages: `integer`, `string or null`, `one of 'user', 'support'`."""
        text = (
            "one of " + ", ".join(repr(v) for v in self.enum)
            if self.enum is not None
            else self.base.value
        )
        return f"{text} or null" if self.nullable and self.base is not BaseType.NULL else text

    def accepts(self, value: Scalar) -> bool:
        """Whether a runtime value conforms (`True` is not an integer; an integer is a number)."""
        if value is None:
            return self.nullable or self.base is BaseType.NULL
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
        return out


INTEGER = ValueType(base=BaseType.INTEGER)
NUMBER = ValueType(base=BaseType.NUMBER)
STRING = ValueType(base=BaseType.STRING)
BOOLEAN = ValueType(base=BaseType.BOOLEAN)
NULL = ValueType(base=BaseType.NULL, nullable=True)

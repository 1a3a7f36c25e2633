"""Runtime checks of values against their declarations: event payloads and context.

A payload is valid when it is a mapping (or None for "no fields") whose keys
are exactly declared fields, every required field is present, and every value
conforms to its declared type (`ValueType.accepts`: `True` is not an integer,
an integer is a number) and, for numbers, is finite (NaN and infinities have
no canonical JSON form) and, for integers, fits in 64 bits (signed), like
every value an effect computes. Optional fields missing from the payload get their
declared default. Messages name fields and types, never values (a value may
be secret).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.ir import EventDecl, FieldDecl
from statekit.compiler.record_values import Record, freeze, holds_records
from statekit.compiler.value_types import INT_MAX as INT_MAX  # re-exported for the engine
from statekit.compiler.value_types import INT_MIN as INT_MIN
from statekit.compiler.value_types import BaseType, ValueType

EMPTY: Mapping[str, Any] = MappingProxyType({})
"""The payload of an event without fields."""

ValueCheck = Callable[[Any], bool]

_KIND = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    type(None): "null",
    list: "list",
    dict: "mapping",
    Record: "record",
}


def kind_of(value: object) -> str:
    """The DSL's name for the type of a runtime value (for messages)."""
    return _KIND.get(type(value), type(value).__name__)


class PayloadError(ValueError):
    """A payload or context that does not match its declaration."""


_MISSING = object()
"""A payload field that is not there (no value check accepts it)."""


def _int64(value: Any) -> bool:
    return value.__class__ is int and INT_MIN <= value <= INT_MAX


def _string(value: Any) -> bool:
    return value.__class__ is str


def _finite_number(value: Any) -> bool:
    cls = value.__class__
    return (cls is int and INT_MIN <= value <= INT_MAX) or (cls is float and math.isfinite(value))


def value_check(t: ValueType) -> ValueCheck:
    """A fast test equivalent to `t.accepts(value)` plus "numbers are finite, integers
    fit in 64 bits"."""
    base: ValueCheck
    if t.items is not None:
        item = value_check(t.items)

        def base(v: Any) -> bool:
            return v.__class__ is list and all(item(x) for x in v)

    elif t.fields is not None:
        checks = tuple((name, value_check(ft)) for name, ft in t.fields)
        names = frozenset(name for name, _ in t.fields)

        def base(v: Any) -> bool:
            return (
                isinstance(v, dict)
                and v.keys() == names
                and all(check(v[name]) for name, check in checks)
            )

    elif t.enum is not None:
        cls, values = type(t.enum[0]), frozenset(t.enum)

        def base(v: Any) -> bool:
            return v.__class__ is cls and v in values

    elif t.base is BaseType.INTEGER:
        base = _int64
    elif t.base is BaseType.NUMBER:
        base = _finite_number
    elif t.base is BaseType.STRING:
        base = _string
    elif t.base is BaseType.BOOLEAN:

        def base(v: Any) -> bool:
            return v.__class__ is bool

    else:

        def base(v: Any) -> bool:
            return v is None

    if not t.nullable:
        return base
    return lambda v: v is None or base(v)


def _problem(decl: FieldDecl, value: Any) -> str:
    wrong = first_wrong_element(decl.type, value)
    if wrong is not None:
        path, expected, element = wrong
        if element is _MISSING:
            return f"field '{decl.name}{path}' is missing (a record needs all its fields)"
        if expected.fields is not None and isinstance(element, dict):
            return f"field '{decl.name}{path}': {_unknown_fields(expected, element)}"
        return f"field '{decl.name}{path}': expected {expected.describe()}, got {_kind(element)}"
    if decl.type.fields is not None and isinstance(value, dict):
        return f"field '{decl.name}': {_unknown_fields(decl.type, value)}"
    got = kind_of(value)
    if value.__class__ is float and not math.isfinite(value):
        got = "a non-finite number"
    elif value.__class__ is int and not INT_MIN <= value <= INT_MAX:
        got = "an integer beyond 64 bits"
    elif decl.type.enum and value.__class__ is type(decl.type.enum[0]):
        got = _shown(value)  # the right kind, but not one of the values: show which
    return f"field '{decl.name}': expected {decl.type.describe()}, got {got}"


def first_wrong_element(
    t: ValueType, value: Any, path: str = ""
) -> tuple[str, ValueType, Any] | None:
    """For a list value of a list type: the path (`[2]`, `[0][1]`) of its first element
    that does not conform, the element's expected type and the element; None when every
    element conforms or `value` is not a list of a list type."""
    if t.fields is not None and isinstance(value, dict):
        return _first_wrong_field(t, value, path)
    items = t.items
    if items is None or value.__class__ is not list:
        return None
    check = value_check(items)
    for index, element in enumerate(value):
        if not check(element):
            where = f"{path}[{index}]"
            return first_wrong_element(items, element, where) or (where, items, element)
    return None


def _first_wrong_field(
    t: ValueType, value: dict[Any, Any], path: str
) -> tuple[str, ValueType, Any] | None:
    """For a mapping of a record type: the path (`.address.city`) of its first field
    that is missing (the value `_MISSING`) or does not conform; an unknown key is
    reported at the record with its fields named; None when every field conforms."""
    assert t.fields is not None
    for name, field_type in t.fields:
        where = f"{path}.{name}"
        if name not in value:
            return where, field_type, _MISSING
        element = value[name]
        if not value_check(field_type)(element):
            return first_wrong_element(field_type, element, where) or (where, field_type, element)
    return None


def _unknown_fields(t: ValueType, value: dict[Any, Any]) -> str:
    """The keys of a mapping that are no fields of the record type `t`, and its fields."""
    names = [n for n, _ in t.fields or ()]
    unknown = ", ".join(sorted(repr(k) for k in value if k not in names))
    return f"unknown field(s) {unknown} (fields: {', '.join(names)})"


def _kind(value: Any) -> str:
    """`kind_of`, naming a non-finite number or an integer beyond 64 bits as such."""
    if value.__class__ is float and not math.isfinite(value):
        return "a non-finite number"
    if value.__class__ is int and not INT_MIN <= value <= INT_MAX:
        return "an integer beyond 64 bits"
    return kind_of(value)


def _shown(value: object) -> str:
    """A value as a message quotes it, cut to a readable length."""
    text = f"'{value}'" if isinstance(value, str) else str(value)
    return text if len(text) <= 42 else f"{text[:38]}...' ({len(text) - 2} characters)"


class PayloadValidator:
    """Checks and completes the payload of one event (see the module docstring)."""

    __slots__ = ("bare", "checks", "event", "fields", "names", "records")

    def __init__(self, decl: EventDecl) -> None:
        self.event = decl.name
        self.fields = tuple(
            (f.name, value_check(f.type), not f.has_default, f.default, f) for f in decl.fields
        )
        self.names = frozenset(f.name for f in decl.fields)
        self.bare = not decl.fields  # no fields: a None payload is valid as is
        # A dict with as many keys as there are fields, each of them declared, is checked
        # by the short loop of `__call__` (no defaults to fill in, no unknown key to find).
        self.checks = tuple((f.name, value_check(f.type)) for f in decl.fields)
        self.records = tuple(f for f in decl.fields if holds_records(f.type))
        if self.records:  # their values are frozen by the long loop of `__call__`
            self.checks = ()

    def check(self, payload: object) -> Mapping[str, Any]:
        """The validated payload (a new dict; defaults filled in), or `PayloadError`.
        Also the validator's call; the engine's step calls `check` by name, a method
        call Python 3.11 runs in the caller's loop where a call of the object goes
        through its type's slot: 60 ns less an event (317 -> 257 ns, the guarded chart's
        payload of bench/xstate_peer.py)."""
        if payload.__class__ is dict:  # the usual payload, before an ABC's isinstance
            checks = self.checks
            if checks and len(payload) == len(checks):
                clean: dict[str, Any] = {}
                for name, check in checks:
                    value = payload.get(name, _MISSING)
                    # the two usual checks inline, without their call (`_MISSING` fails
                    # every check): bench/engine_core.py's task chart checks 1-3 such
                    # fields per event, the guarded chart one
                    if check is _int64:
                        if value.__class__ is not int or not INT_MIN <= value <= INT_MAX:
                            break
                    elif check is _string:
                        if value.__class__ is not str:
                            break
                    elif not check(value):
                        break
                    clean[name] = value
                else:
                    return clean
                # a missing field or a bad value: the loop below words it
        elif payload is None:
            payload = EMPTY
        elif not isinstance(payload, Mapping):
            raise PayloadError(
                f"the payload of {self.event} must be a mapping, not {kind_of(payload)}"
            )
        if not self.fields:
            if payload:
                raise PayloadError(self._unknown(payload))
            return EMPTY
        clean = {}
        found = 0
        for name, check, required, default, decl in self.fields:
            if name in payload:
                value = payload[name]
                if not check(value):
                    raise PayloadError(f"{self.event}: {_problem(decl, value)}")
                clean[name] = freeze(decl.type, value) if self.records else value
                found += 1
            elif required:
                raise PayloadError(f"{self.event}: missing required field '{name}'")
            else:
                clean[name] = default
        if found != len(payload):
            raise PayloadError(self._unknown(payload))
        return clean

    __call__ = check

    def _unknown(self, payload: Mapping[Any, Any]) -> str:
        unknown = sorted(repr(k) for k in payload if k not in self.names)
        declared = ", ".join(sorted(self.names)) or "none"
        return f"{self.event}: unknown field(s) {', '.join(unknown)} (declared: {declared})"


def check_context(
    declared: Mapping[str, FieldDecl], values: Mapping[Any, Any], *, complete: bool
) -> dict[str, Any]:
    """Context values checked against the declarations; with `complete`, every field
    must be given, else missing ones take their defaults. Raises `PayloadError`."""
    if not isinstance(values, Mapping):
        raise PayloadError(f"a context must be a mapping, not {kind_of(values)}")
    problems: list[str] = []
    unknown = sorted(repr(k) for k in values if k not in declared)
    if unknown:
        problems.append(f"unknown context field(s) {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for name, decl in declared.items():
        if name in values:
            value = values[name]
            if not value_check(decl.type)(value):
                problems.append(f"context {_problem(decl, value)}")
            elif holds_records(decl.type):
                value = freeze(decl.type, value)
            out[name] = value
        elif complete:
            problems.append(f"missing context field '{name}'")
        else:
            out[name] = decl.default
    if problems:
        raise PayloadError("; ".join(problems))
    return out

"""The run-time value of a `record` field: a frozen mapping, and how a value of a
declared type is frozen.

A `Record` is a `dict` whose mutating methods refuse: it compares equal to any
mapping with the same items, and the canonical JSON encoder (`statekit.compiler.
canonical`) writes it as an object with sorted keys, as it writes any dict. A new
record (an `assign` to one field) is a new value; the old one is never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from statekit.compiler.value_types import ValueType


class Record(dict[str, Any]):
    """A record value: an immutable mapping of field name to value."""

    __slots__ = ()

    def _frozen(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a record is immutable: assign a new record instead")

    __setitem__ = _frozen
    __delitem__ = _frozen
    clear = _frozen
    pop = _frozen
    popitem = _frozen
    setdefault = _frozen
    update = _frozen
    __ior__ = _frozen

    def __hash__(self) -> int:  # type: ignore[override]
        """Equal records hash equal (a record is a value: a state's hash holds it)."""
        return hash(frozenset([(name, _hash_key(value)) for name, value in self.items()]))

    def __repr__(self) -> str:
        return f"Record({dict.__repr__(self)})"

    def replaced(self, name: str, value: object) -> Record:
        """A new record with field `name` set to `value`."""
        out = dict(self)
        out[name] = value
        return Record(out)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Record, (dict(self),))

    def __copy__(self) -> Record:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Record:
        return self


def _hash_key(value: Any) -> Any:
    """A field's value as a hash key: a list as a tuple (a record hashes itself)."""
    if value.__class__ is list:
        return tuple([_hash_key(v) for v in value])
    return value


def holds_records(t: ValueType) -> bool:
    """Whether a value of `t` is, or contains, a record."""
    if t.fields is not None:
        return True
    return t.items is not None and holds_records(t.items)


def freeze(t: ValueType, value: Any) -> Any:
    """`value` (already checked against `t`) with every record in it a `Record`."""
    if value is None:
        return None
    if t.fields is not None and isinstance(value, Mapping):
        return Record({name: freeze(ft, value[name]) for name, ft in t.fields})
    if t.items is not None and isinstance(value, list) and holds_records(t.items):
        return [freeze(t.items, item) for item in value]
    return value

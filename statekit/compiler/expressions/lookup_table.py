"""A declared lookup table (`tables:`): constant entries from a key domain to typed values.

The table is checked where it is declared (`statekit.compiler.model.tables`) and read in
expressions as `tables.<name>[key]` (`statekit.compiler.expressions.table_checks`); the read
compiles to one dictionary look-up (`statekit.compiler.expressions.closures`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.value_types import ValueType

TableKey = str | int
"""A key of a table: a string or an integer."""
TableValue = str | int | float | bool
"""A value of a table entry."""


@dataclass(frozen=True, slots=True)
class LookupTable:
    """One table of the chart's `tables:` section.

    `key` is the key type: an enum (every value has an entry: `complete`) or a plain
    `string`/`integer` (the listed keys are the literal keys; a key outside them reads
    `default`, which a read that may miss needs). `value` is the type of every entry.
    `duration` says the values were declared as durations (milliseconds, integers).
    """

    name: str
    key: ValueType
    value: ValueType
    entries: Mapping[TableKey, TableValue] = field(
        default_factory=lambda: MappingProxyType({}), compare=False
    )
    default: TableValue | None = None
    has_default: bool = False
    duration: bool = False
    description: str | None = None
    span: SourceSpan = field(default_factory=lambda: SourceSpan.start_of(""), compare=False)
    key_field: str | None = None  # `key: ctx.<field>`: the context field whose enum keys it
    _index: dict[TableKey, TableValue] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # One dictionary per table, shared by every compiled read of it (a read indexes it).
        object.__setattr__(self, "_index", dict(self.entries))

    def index(self) -> dict[TableKey, TableValue]:
        """The entries as the plain dictionary every compiled read shares (do not change it)."""
        return self._index

    @property
    def enum_keyed(self) -> bool:
        """Whether the keys are an enum's values (then every value has an entry)."""
        return self.key.enum is not None

    def key_text(self) -> str:
        """The key type as the chart writes it, for messages."""
        if self.key_field is not None:
            return f"the values of ctx.{self.key_field}"
        enum = self.key.enum
        if enum is None:
            return self.key.base.value
        return self.key.describe() if len(enum) <= 8 else f"an enum of {len(enum)} values"

    def to_json(self) -> dict[str, object]:
        """Canonical JSON form (entries in declaration order, as a list of pairs)."""
        out: dict[str, object] = {
            "key": self.key.to_json(),
            "value": "duration" if self.duration else self.value.to_json(),
            "entries": [[k, v] for k, v in self.entries.items()],
        }
        if self.has_default:
            out["default"] = self.default
        return out


def shown_key(value: object) -> str:
    """A key or value for a message: its repr, at most about 40 characters."""
    shown = repr(value)
    return shown if len(shown) <= 40 else f"{shown[:37]}... ({len(shown)} characters)"

"""The chart's `tables:` section: constant lookup tables, checked where they are declared.

A table names its key type (`key:` an enum, `ctx.<field>` of an enum context field, or
`string`/`integer` for literal keys), its value type (`value:` a type name, `duration` or
an enum) and its `entries:`; an optional `default:` is what a read of an unlisted key gives
(only for `string`/`integer` keys: an enum-keyed table lists every value). Reported here: an
enum value without an entry (`table-incomplete`, listing them), a key outside the key type,
a value outside the value type, a duplicate key. Each check is linear in the entries.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.expressions.lookup_table import (
    LookupTable,
    TableKey,
    TableValue,
    shown_key,
)
from statekit.compiler.ir import FieldDecl
from statekit.compiler.model.declarations import mapping_items, text
from statekit.compiler.model.timers import parse_delay
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.rules import table_incomplete
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import INTEGER, BaseType, ValueType, out_of_range

MAX_PROBLEMS_PER_TABLE = 10
"""Most entry problems reported for one table (then one line counts the rest)."""
_SHOWN_KEYS = 8  # most missing keys one message lists
MAX_SUGGESTION_CANDIDATES = 1000
"""Most names a "did you mean" compares with (beyond, no suggestion: bounded time)."""
_INTEGER_KEY = re.compile(r"-?[0-9]{1,19}")


@dataclass(frozen=True, slots=True)
class ParsedTables:
    """The tables without errors, by name in declaration order, the names of those with
    errors (still declared: a read of one reports nothing more), and every problem."""

    tables: Mapping[str, LookupTable]
    problems: tuple[Diagnostic, ...]
    broken: frozenset[str] = frozenset()


def parse_tables(node: Node | None, context: Mapping[str, FieldDecl]) -> ParsedTables:
    """The `tables:` mapping (the schema has checked its shape)."""
    tables: dict[str, LookupTable] = {}
    problems: list[Diagnostic] = []
    broken: set[str] = set()
    for key, spec in mapping_items(node):
        if not isinstance(spec, MappingNode):
            broken.add(str(key.value))  # the schema reports its shape
            continue
        table = _Table(str(key.value), key, spec, context).read()
        problems.extend(table.problems)
        if table.table is not None:
            tables[table.table.name] = table.table
        else:
            broken.add(str(key.value))
    return ParsedTables(
        tables=MappingProxyType(tables), problems=tuple(problems), broken=frozenset(broken)
    )


@dataclass(frozen=True, slots=True)
class _Read:
    table: LookupTable | None
    problems: list[Diagnostic]


class _Table:
    """One table's declaration, read and checked."""

    def __init__(
        self, name: str, key: ScalarNode, spec: MappingNode, context: Mapping[str, FieldDecl]
    ) -> None:
        self.name = name
        self.key_node = key
        self.spec = spec
        self.context = context
        self.problems: list[Diagnostic] = []
        self.skipped = 0

    def _error(self, node: Node, message: str, *notes: str, slug: str = schema_rule.SLUG) -> None:
        if len(self.problems) >= MAX_PROBLEMS_PER_TABLE:
            self.skipped += 1
            return
        self.problems.append(
            Diagnostic(
                slug=slug,
                severity=Severity.ERROR,
                message=f"table '{self.name}': {message}",
                span=node.span,
                notes=notes,
            )
        )

    def read(self) -> _Read:
        key_type, key_field = self._key_type(self.spec.get("key"))
        value_node = self.spec.get("value")
        value_type, duration = self._value_type(value_node)
        if key_type is None or value_type is None:
            return _Read(None, self.problems)
        entries = self._entries(self.spec.get("entries"), key_type, value_type, duration)
        if key_type.enum is not None:
            self._complete(entries, key_type)
        default_node = self.spec.get("default")
        default: TableValue | None = None
        if default_node is not None:
            if key_type.enum is not None:
                self._error(
                    default_node,
                    "a table keyed by an enum lists every value and has no default",
                    "remove default:, or key the table by string or integer",
                )
            elif isinstance(default_node, ScalarNode):
                default = self._value(default_node, value_type, duration)
        if self.skipped:
            self.problems.append(
                Diagnostic(
                    slug=schema_rule.SLUG,
                    severity=Severity.ERROR,
                    message=f"table '{self.name}': {self.skipped} more problems in its entries",
                    span=self.key_node.span,
                )
            )
        if self.problems:
            return _Read(None, self.problems)
        table = LookupTable(
            name=self.name,
            key=key_type,
            value=value_type,
            entries=MappingProxyType(entries),
            default=default,
            has_default=default_node is not None,
            duration=duration,
            description=text(self.spec.get("description")),
            span=self.key_node.span,
            key_field=key_field,
        )
        return _Read(table, self.problems)

    def _key_type(self, node: Node | None) -> tuple[ValueType | None, str | None]:
        if isinstance(node, MappingNode):
            return self._enum_type(node, "key"), None
        spec = text(node)
        if spec in ("string", "integer"):
            return ValueType(base=BaseType(spec)), None
        if spec is not None and spec.startswith("ctx."):
            declared = self.context.get(spec[4:])
            if declared is None:
                close = difflib.get_close_matches(spec[4:], list(self.context), n=1)
                notes = (f"did you mean 'ctx.{close[0]}'?",) if close else ()
                assert node is not None
                self._error(node, f"unknown context field '{spec[4:]}'", *notes)
                return None, None
            if declared.type.enum is None or declared.type.nullable:
                assert node is not None
                self._error(
                    node,
                    f"key: {spec} needs an enum field that is not nullable; it is "
                    f"{declared.type.describe()}",
                )
                return None, None
            return ValueType(base=declared.type.base, enum=declared.type.enum), declared.name
        assert node is not None  # the schema requires key:
        self._error(
            node,
            f"key: {spec!r} is not a key type",
            "a key is {enum: [values]}, ctx.<enum field>, string or integer",
        )
        return None, None

    def _enum_type(self, node: MappingNode, role: str) -> ValueType | None:
        enum_node = node.get("enum")
        values = (
            [i.value for i in enum_node.items if isinstance(i, ScalarNode)]
            if isinstance(enum_node, SequenceNode)
            else []
        )
        kinds = {type(v) for v in values}
        if not values or len(kinds) > 1 or not kinds <= {str, int}:
            message = f"{role}: {{enum: [...]}} needs values that are all strings or all integers"
            self._error(node, message)
            return None
        base = BaseType.STRING if isinstance(values[0], str) else BaseType.INTEGER
        return ValueType(base=base, enum=tuple(v for v in values if isinstance(v, str | int)))

    def _value_type(self, node: Node | None) -> tuple[ValueType | None, bool]:
        if isinstance(node, MappingNode):
            return self._enum_type(node, "value"), False
        spec = text(node)
        if spec == "duration":
            return INTEGER, True
        if spec in ("integer", "number", "string", "boolean"):
            return ValueType(base=BaseType(spec)), False
        assert node is not None  # the schema requires value: and admits only these
        self._error(node, f"value: {spec!r} is not a value type")
        return None, False

    def _entries(
        self, node: Node | None, key_type: ValueType, value_type: ValueType, duration: bool
    ) -> dict[TableKey, TableValue]:
        entries: dict[TableKey, TableValue] = {}
        spans: dict[TableKey, ScalarNode] = {}
        allowed = set(key_type.enum) if key_type.enum is not None else None
        for key_node, value_node in mapping_items(node):
            key = self._key(key_node, key_type, allowed)
            if key is None:
                continue
            if key in spans:
                self._error(
                    key_node,
                    f"key {shown_key(key)} is listed twice (first at line {spans[key].span.line})",
                )
                continue
            spans[key] = key_node
            if isinstance(value_node, ScalarNode):
                value = self._value(value_node, value_type, duration)
                if value is not None:
                    entries[key] = value
            else:
                self._error(value_node, "an entry's value is a single value")
        return entries

    def _complete(self, listed: Mapping[TableKey, TableValue], key_type: ValueType) -> None:
        """`table-incomplete` at `entries:` for the enum values without an entry."""
        missing = [v for v in key_type.enum or () if v not in listed]
        if not missing or self.problems:  # an entry with an error is missing too: said once
            return
        listed_text = ", ".join(shown_key(v) for v in missing[:_SHOWN_KEYS])
        extra = len(missing) - _SHOWN_KEYS
        more = f" and {extra} more" if extra > 0 else ""
        self._error(
            self.spec.key_node("entries") or self.spec,
            f"no entry for {listed_text}{more}",
            "a table keyed by an enum lists every value of it",
            slug=table_incomplete.SLUG,
        )

    def _key(
        self, node: ScalarNode, key_type: ValueType, allowed: set[str | int] | None
    ) -> TableKey | None:
        raw = str(node.value)
        key: TableKey = raw
        if key_type.base is BaseType.INTEGER:
            if not _INTEGER_KEY.fullmatch(raw) or out_of_range(int(raw)):
                self._error(node, f"key {shown_key(raw)} is not an integer")
                return None
            key = int(raw)
        if allowed is not None and key not in allowed:
            close = (
                difflib.get_close_matches(raw, [str(v) for v in allowed], n=1)
                if len(allowed) <= MAX_SUGGESTION_CANDIDATES and len(raw) <= 100
                else []
            )
            notes = (f"did you mean {close[0]!r}?",) if close else ()
            self._error(node, f"key {shown_key(key)} is not {_describe(key_type)}", *notes)
            return None
        return key

    def _value(self, node: ScalarNode, value_type: ValueType, duration: bool) -> TableValue | None:
        value = node.value
        if duration:
            if isinstance(value, str) and (parsed := parse_delay(value)) is not None:
                return parsed.ms
            if type(value) is int and value >= 0 and out_of_range(value) is None:
                return value
            self._error(
                node,
                f"{shown_key(value)} is not a duration",
                "a duration is a literal such as 250ms, 30s, 15m, 2h, 7d, 1h30m, or milliseconds",
            )
            return None
        if value is None or not value_type.accepts(value):
            self._error(node, f"{shown_key(value)} is not {value_type.describe()}")
            return None
        why = out_of_range(value)
        if why is not None:
            self._error(node, f"{shown_key(value)} {why}")
            return None
        return value


def _describe(kind: ValueType) -> str:
    """A type for a message: an enum of many values by its size."""
    if kind.enum is not None and len(kind.enum) > _SHOWN_KEYS:
        return f"one of the enum's {len(kind.enum)} values"
    return kind.describe()

"""What the translation of one SCXML document knows as it goes: state ids, `<data>`
and their types, the events it names, the notes; and how it refuses (`ScxmlError` at
an element) and translates an expression."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from statekit.compiler.value_types import STRING, BaseType, ValueType
from statekit.scxml.data_types import DataField, Write, constant_value
from statekit.scxml.document import Element, ScxmlError
from statekit.scxml.expressions import UnsupportedExpression, translate
from statekit.scxml.generated_invoke_ids import with_invokeid
from statekit.scxml.io_processors import is_location_read
from statekit.scxml.type_tests import instanceof_array

_ONE_VALUE = re.compile(r"^\s*(!|not\s+)?\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[a-z]+)?)\s*$")
_EVENT_TYPES = {
    "_event.name": STRING,
    "_event.type": STRING,
    "_event.origin": ValueType(BaseType.STRING, nullable=True),
    "_event.invokeid": ValueType(BaseType.STRING, nullable=True),
    "_event.sendid": ValueType(BaseType.STRING, nullable=True),
    "_event.origintype": ValueType(BaseType.STRING, nullable=True),
}
SYSTEM_VARIABLES = frozenset({"_event", "_sessionid", "_name", "_ioprocessors", "_x"})


@dataclass
class ImportContext:
    """The state of one document's translation."""

    path: str
    chart_name: str = ""
    ids: dict[str, tuple[str, ...]] = field(default_factory=dict)
    histories: set[str] = field(default_factory=set)
    data: list[tuple[Element, str | None]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    fields: dict[str, DataField] = field(default_factory=dict)
    system: dict[str, str] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    send_ids: set[str] = field(default_factory=set)
    computed_events: list[Element] = field(default_factory=list)
    sends: list[tuple[str, Element]] = field(default_factory=list)
    payloads: dict[str, dict[str, ValueType]] = field(default_factory=dict)
    invoked: bool = False
    http_events: list[str] = field(default_factory=list)  # events HTTP <send>s send
    invokes: list[str] = field(default_factory=list)
    generated_invokes: dict[str, str] = field(default_factory=dict)  # name → SCXML's value
    never_started: set[str] = field(default_factory=set)  # <invoke>s that always fail
    python_datamodel: bool = False
    notes: list[str] = field(default_factory=list)
    failed_data: list[str] = field(default_factory=list)  # why each failing <data expr> fails
    start_assigns: list[dict[str, Any]] = field(default_factory=list)  # top-level <script>s'

    def refuse(self, element: Element, message: str) -> ScxmlError:
        return ScxmlError(self.path, element.line, element.column, message)

    def note(self, element: Element, message: str) -> None:
        self.notes.append(f"{self.path}:{element.line}:{element.column}: note[scxml] {message}")

    def data_names(self) -> frozenset[str]:
        return frozenset(element.attrs["id"] for element, _ in self.data)

    def expression(self, element: Element, attribute: str) -> str:
        return self.translated(element, element.attrs[attribute], attribute)

    def translated(self, element: Element, text: str, attribute: str = "expr") -> str:
        try:
            booleans = {n for n, f in self.fields.items() if f.type.base is BaseType.BOOLEAN}
            ecmascript_or = attribute == "cond" and not self.python_datamodel
            return translate(
                text,
                self.data_names(),
                lambda name: self.in_ref(element, name),
                with_invokeid(self.system, self.generated_invokes),
                frozenset(booleans) if ecmascript_or else None,  # `|` as or
            )
        except UnsupportedExpression as error:
            raise self.refuse(
                element, f"<{element.tag} {attribute}={text!r}>: {error} is not expressible"
            ) from None

    def condition(self, element: Element) -> str:
        """A `cond`. One value alone, or negated (`cond="Var1"`, `cond="not
        _event.origin"`), is SCXML's conversion to a boolean, written out for the value's
        type: set, and not false, 0 or ''."""
        if (typed := instanceof_array(element.attrs["cond"], self.fields)) is not None:
            return typed
        match = _ONE_VALUE.match(element.attrs["cond"])
        if match is None and is_location_read(element.attrs["cond"]):  # a string: set
            return f"{self.expression(element, 'cond')} != ''"
        if match is None:
            return self.expression(element, "cond")
        negated, name = bool(match.group(1)), match.group(2)
        data = self.fields.get(name)
        if data is not None:
            ref, kind = f"ctx.{name}", data.type
        elif name in _EVENT_TYPES:
            ref, kind = name, _EVENT_TYPES[name]
        else:
            return self.expression(element, "cond")
        test = {"boolean": f"{ref} == true", "string": f"{ref} != ''"}.get(
            kind.base.value, f"{ref} != 0"
        )
        if kind.base is BaseType.RECORD:  # a record is set, whatever it holds
            test = f"{ref} is not None" if kind.nullable else "true"
        elif kind.nullable:
            test = f"{ref} is not None and {test}"
        return f"not ({test})" if negated else test

    def in_ref(self, element: Element, name: str) -> str | None:
        """`In(name)`'s state; None for a history pseudo-state (never active)."""
        return None if self.state_ref(element, name) in self.histories else name

    def state_ref(self, element: Element, name: str) -> str:
        if name not in self.ids:
            raise self.refuse(element, f"no state has the id {name!r}")
        return name

    def constant(self, element: Element, attribute: str) -> Any:
        """The value of `element`'s expression `attribute`, which must be a constant."""
        text = element.attrs[attribute]
        known, value = constant_value(self.expression(element, attribute), element, self.fields)
        if not known:
            raise self.refuse(
                element,
                f"<{element.tag} {attribute}={text!r}>: not a constant (it reads a <data> "
                "that is assigned, or fails)",
            )
        return value

    def values_of(self, element: Element, attribute: str) -> tuple[str, list[Any]] | None:
        """When `element`'s expression `attribute` is one `<data>` that is only ever given
        constants: its name and every value it can have (its default first); else None."""
        name = element.attrs[attribute].strip()
        data = self.fields.get(name)
        if data is None or data.at_start is not None:  # the instance's: not known here
            return None
        values = [] if data.default is None else [data.default]
        for write in self.writes:
            if write.location != name:
                continue
            if write.expr is None:
                return None
            known, value = constant_value(
                self.translated(write.element, write.expr), write.element, self.fields
            )
            if not known:
                return None
            if value not in values:
                values.append(value)
        return name, values


def literal(value: Any) -> str:
    """A constant as an expression of the language."""
    return quoted(value) if isinstance(value, str) else repr(value).lower()


def quoted(text: str) -> str:
    """`text` as a string literal of the expression language."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def event_name(event: str) -> str:
    return event.replace(".", "__")

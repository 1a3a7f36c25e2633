"""The payloads of the events an SCXML document sends with data: each `<send>`'s
`<param name expr>` and `namelist` as statekit's `send: {payload: ...}`, and each
event's payload fields declared with the type of the values sent in them.

A field every `<send>` of the event gives is required; one some leave out is
nullable with the default null (SCXML's `_event.data.x` is then undefined). Values
of two types for one field are refused at the later `<send>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, TypedEvent
from statekit.compiler.expressions.type_relations import joined_list
from statekit.compiler.value_types import NUMBER, BaseType, ValueType
from statekit.scxml.context import quoted
from statekit.scxml.data_content import structured_payload
from statekit.scxml.document import Element, ScxmlError
from statekit.scxml.expressions import CONTENT_FIELD

Translate = Callable[[Element, str, str], str]
"""(an element, an SCXML expression, the attribute it is in) → statekit's text."""


def send_payload(
    element: Element,
    data_names: frozenset[str],
    translate: Translate,
    refuse: Callable[..., ScxmlError],
) -> dict[str, str]:
    """The payload (field → statekit expression) of a `<send>`'s `namelist` and
    `<param>`s, or of its `<content>` (`content_payload`)."""
    contents = element.kids("content")
    if contents:
        if "namelist" in element.attrs or element.kids("param"):
            raise refuse(element, "<send> with <content> and <param> or namelist (an error)")
        return content_payload(contents[0], translate, refuse)
    payload: dict[str, str] = {}
    for name in element.attrs.get("namelist", "").split():
        if name not in data_names:
            raise refuse(element, f"<send namelist>: {name!r} names no <data> (an error)")
        payload[name] = f"ctx.{name}"
    for param in element.kids("param"):
        name = param.attrs.get("name", "")
        if "expr" in param.attrs:
            payload[name] = translate(param, param.attrs["expr"], "expr")
        elif param.attrs.get("location") in data_names:
            payload[name] = f"ctx.{param.attrs['location']}"
        else:
            raise refuse(param, "<param> without expr or a declared location")
    return payload


def content_payload(
    content: Element, translate: Translate, refuse: Callable[..., ScxmlError]
) -> dict[str, str]:
    """A `<send>`'s `<content>` as the one payload field `content` (a statekit payload is
    a record of named fields; `_event.data` as a whole reads that field). Its `expr`
    translated; its text space-normalized, an integer when it reads as one, else a
    string. JSON is the payload `structured_payload` gives; XML is refused."""
    if "expr" in content.attrs:
        return {CONTENT_FIELD: translate(content, content.attrs["expr"], "expr")}
    text = " ".join(content.text.split())
    if content.children or text[:1] in ("{", "["):
        return structured_payload(content, text, refuse)
    if re.fullmatch(r"-?\d+", text):
        return {CONTENT_FIELD: str(int(text))}
    return {CONTENT_FIELD: quoted(text)}


def payload_fields(
    sends: list[tuple[str, Element, dict[str, str]]],
    context: Mapping[str, ValueType],
    refuse: Callable[..., ScxmlError],
) -> dict[str, dict[str, ValueType]]:
    """Each event's payload field types, from every `<send>` of it: (event, element,
    payload); a field not in every send is nullable."""
    types: dict[str, dict[str, ValueType]] = {}
    present: dict[str, list[set[str]]] = {}
    for event, element, payload in sends:
        fields = types.setdefault(event, {})
        present.setdefault(event, []).append(set(payload))
        for name, source in payload.items():
            kind = _type_of(source, element, context)
            if kind is None:
                continue
            before = fields.get(name)
            joined = kind if before is None else _join(before, kind)
            if joined is None:
                raise refuse(
                    element,
                    f"<send event={event!r}>: its data {name!r} is a {kind.describe()} here "
                    f"and a {before.describe() if before else ''} in another <send>",
                )
            fields[name] = joined
    for event, fields in types.items():
        for name, kind in fields.items():
            if not all(name in given for given in present[event]):
                fields[name] = ValueType(kind.base, nullable=True, items=kind.items)
    return types


def declaration(fields: Mapping[str, ValueType]) -> dict[str, Any]:
    """The `events:` entry of an event with these payload fields."""
    out: dict[str, Any] = {}
    for name, kind in fields.items():
        spec: dict[str, Any] = {"type": kind.base.value}
        if kind.items is not None:  # a list: the spec of its elements
            spec["items"] = kind.items.to_json()
        if kind.nullable:
            spec |= {"nullable": True, "default": None}
        out[name] = spec if len(spec) > 1 else kind.base.value
    return out


def _type_of(source: str, element: Element, context: Mapping[str, ValueType]) -> ValueType | None:
    scope = ExpressionScope(
        context=dict(context), event=TypedEvent({}), resolve_state=lambda _ref, _span: 0
    )
    span = SourceSpan("<scxml>", element.line, element.column, element.line, element.column + 1)
    compiled = compile_expression(source, span, scope)
    if not isinstance(compiled, Expression) or compiled.type.base is BaseType.NULL:
        return None
    return ValueType(compiled.type.base, items=compiled.type.items)


def _join(a: ValueType, b: ValueType) -> ValueType | None:
    if a.base is BaseType.LIST:
        return joined_list(a, b)
    if a.base is b.base:
        return a
    if {a.base, b.base} == {BaseType.INTEGER, BaseType.NUMBER}:
        return NUMBER
    return None

"""An event's payload as HTML form fields, and back (`application/x-www-form-urlencoded`).

Out (`form_body`): each payload field is one `name=value` pair in payload order,
percent-encoded (a space is `%20`, which every form decoder reads as `+` is read; a
receiver searching the raw body for `this%20is`, as the W3C test 520 does, finds it); a
string as it is, an integer or number in decimal, a boolean as `true`/`false` (the
expression language's spelling), null as the empty string, a list as one pair per
element. In (`typed_payload`): a form's values are text, so each is read as the type
the receiving chart declares for that field of the event (`integer` from `-?[0-9]+`,
`number`, `boolean` from `true`/`false`, `string` as it is, a nullable field's empty
value as null, a list field from every pair of its name); a value that does not read
as its type, a field the event does not declare, or a required field missing is a
`FormFieldError` naming the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from statekit.compiler.ir import EventDecl
from statekit.compiler.value_types import BaseType, ValueType

_INTEGER = re.compile(r"^-?[0-9]+$")


class FormFieldError(ValueError):
    """A form field that the event cannot take; the message names the field."""


def form_body(payload: Mapping[str, Any]) -> bytes:
    """The payload as a form-encoded body (module docstring)."""
    pairs: list[tuple[str, str]] = []
    for name, value in payload.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            pairs.append((name, _text(item)))
    return urlencode(pairs, quote_via=quote).encode("ascii")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def typed_payload(
    pairs: Sequence[tuple[str, str]], event: EventDecl, given: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The payload `event` takes from form `pairs` (module docstring); `given` are fields
    the caller fills itself (they are not read from the form)."""
    declared = event.field_types()
    values: dict[str, list[str]] = {}
    for name, value in pairs:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise FormFieldError(
                f"field {name!r}: the event {event.name!r} has no such field (it declares: {known})"
            )
        if given and name in given:
            raise FormFieldError(f"field {name!r}: filled by the intake, not by the form")
        values.setdefault(name, []).append(value)
    payload: dict[str, Any] = dict(given or {})
    for field in event.fields:
        if field.name in payload:
            continue
        texts = values.get(field.name)
        if texts is None:
            if not field.has_default:
                raise FormFieldError(f"field {field.name!r}: required by {event.name!r}, missing")
            continue
        if field.type.base is BaseType.LIST:
            assert field.type.items is not None  # a list field has an item type
            items = field.type.items
            payload[field.name] = [_read(field.name, t, items) for t in texts]
        elif len(texts) > 1:
            raise FormFieldError(f"field {field.name!r}: given {len(texts)} times, takes one value")
        else:
            payload[field.name] = _read(field.name, texts[0], field.type)
    return payload


def _read(name: str, text: str, kind: ValueType) -> Any:
    if text == "" and kind.nullable:
        return None
    value: Any = text
    base = kind.base
    if base is BaseType.INTEGER:
        if not _INTEGER.match(text):
            raise FormFieldError(f"field {name!r}: expected integer, got {text!r}")
        value = int(text)
    elif base is BaseType.NUMBER:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise FormFieldError(f"field {name!r}: expected number, got {text!r}") from None
        value = int(value) if _INTEGER.match(text) else value
    elif base is BaseType.BOOLEAN:
        if text not in ("true", "false"):
            raise FormFieldError(f"field {name!r}: expected true or false, got {text!r}")
        value = text == "true"
    if kind.enum is not None and value not in kind.enum:
        allowed = ", ".join(repr(v) for v in kind.enum)
        raise FormFieldError(f"field {name!r}: expected one of {allowed}, got {text!r}")
    return value

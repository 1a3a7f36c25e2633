"""`<send targetexpr>` whose target is `_event.origin`, or a `<data>` an `<assign>` gave
it: a send back to the originator, written as statekit's `send: {to: {address: ...}}`.

statekit's `_event.origin` is the sending instance's ID (an instance's own `send`
included), which is an address statekit's family routing resolves when the send runs
(`statekit.engine.addresses`): the instance itself, its parent, a child or another
member; one that reaches nobody (a null origin: an event from outside) sends
`error.communication` back, as SCXML's processor raises it. `typeexpr="_event.origintype"`
names the processor the event came by: statekit's is the SCXML event processor (or null,
SCXML's default, the same one), so the send goes through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from statekit.scxml.context import ImportContext
from statekit.scxml.document import Element

ORIGIN: Final = "_event.origin"
_ORIGIN_TYPE = "_event.origintype"
Translator = Callable[[Element, ImportContext], list[dict[str, Any]]]


def from_origin(element: Element, c: ImportContext) -> bool:
    """Whether the `<send>`'s `targetexpr` is, or reads a `<data>` written from,
    `_event.origin`."""
    text = element.attrs["targetexpr"]
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) & c.data_names()
    written = any(w.location in names and w.expr is not None and ORIGIN in w.expr for w in c.writes)
    return ORIGIN in text or written


def to_origin(element: Element, c: ImportContext, translate: Translator) -> list[dict[str, Any]]:
    """The `<send>` to the address its `targetexpr` computes; `translate` writes the send
    to this session (no target), to which the address is then added."""
    address = c.expression(element, "targetexpr")
    attrs = {k: v for k, v in element.attrs.items() if k not in ("targetexpr", "typeexpr")}
    kind = element.attrs.get("typeexpr")
    if kind is not None and kind.strip() != _ORIGIN_TYPE:
        raise c.refuse(element, f"<send typeexpr={kind!r}> with a target from _event.origin")
    if kind is not None:
        c.note(element, "typeexpr='_event.origintype': the SCXML event processor's")
    if {"delay", "delayexpr", "id", "idlocation"} & set(attrs):
        raise c.refuse(element, "<send> to _event.origin with a delay or an id")
    plain = Element(element.tag, attrs, element.line, element.column, element.namespace)
    plain.children = element.children
    effects = translate(plain, c)
    sends = [e for e in effects if "send" in e]
    if len(effects) != 1 or len(sends) != 1:  # (a send that fails is an error.execution)
        return effects
    return [{"send": {**sends[0]["send"], "to": {"address": address}}}]

"""`_event` (SCXML's system variable) in expressions: what the triggering event is, beside
its payload (its name, type, origin, invokeid, sendid and origintype).

`_event.data.<field>` is `event.<field>`; `_event.name`, `_event.type`, `_event.origin`,
`_event.invokeid`, `_event.sendid` and `_event.origintype` are read from the payload
mapping the engine evaluates with: for a chart that reads them, the engine hands its
expressions an `EventPayload` (the payload's fields, and the `meta` of the event) instead
of the plain payload. Charts that never read them get the plain payload and pay nothing.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from statekit.compiler.expressions.instance_reading import STEP_INSTANCE
from statekit.compiler.value_types import STRING, BaseType, ValueType

MetaField: TypeAlias = typing.Literal["name", "type", "origin", "invokeid", "sendid", "origintype"]

EXTERNAL: Final = "external"
"""`_event.type` of an event delivered to the instance (an API call, a timer, a `send`)."""
INTERNAL: Final = "internal"
"""`_event.type` of an event a `raise` queued in the macrostep."""
PLATFORM: Final = "platform"
"""`_event.type` of an event the engine raised itself (`done.state.*`, `error.execution`)."""

EVENT_KINDS: Final = (EXTERNAL, INTERNAL, PLATFORM)

META_TYPES: Final[Mapping[str, ValueType]] = {
    "name": STRING,
    "type": ValueType(base=BaseType.STRING, enum=EVENT_KINDS),
    "origin": ValueType(base=BaseType.STRING, nullable=True),
    "invokeid": ValueType(base=BaseType.STRING, nullable=True),
    "sendid": ValueType(base=BaseType.STRING, nullable=True),
    "origintype": ValueType(base=BaseType.STRING, nullable=True),
}
"""The type of each `_event.<field>` besides `data`."""

ANY_EVENT_META_TYPES: Final[Mapping[str, ValueType]] = {
    name: dataclasses.replace(kind, nullable=True) for name, kind in META_TYPES.items()
}
"""The type of each `_event.<field>` in code that runs for any event or before any (entry
and exit actions, eventless transitions): null where no event is bound yet, in the start's
entry (SCXML leaves `_event` unbound until the first event)."""

META_INDEX: Final[Mapping[str, int]] = {
    "name": 0,
    "type": 1,
    "origin": 2,
    "invokeid": 3,
    "sendid": 4,
    "origintype": 5,
}
"""The position of each field in `EventPayload.meta`."""

SENT_BY_SEND: Final = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"
"""`_event.origintype` of an event a `send` delivered (SCXML's event I/O processor);
null for any other event."""

EventMetaValues: TypeAlias = tuple[str, str, str | None, str | None, str | None, str | None]
"""(name, type, origin, invokeid, sendid, origintype) of one event."""


class EventPayload(dict[str, Any]):
    """An event's payload fields, the event's `meta` (name, type, origin, invokeid; None
    where the chart does not read `_event`), and the `locals` of the `foreach` bodies the
    expression is evaluated in."""

    __slots__ = ("locals", "meta")

    def __init__(
        self,
        payload: Mapping[str, Any],
        meta: EventMetaValues | None,
        local_values: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(payload)
        self.meta = meta
        self.locals: Mapping[str, Any] = {} if local_values is None else local_values


def with_locals(payload: Mapping[str, Any], local_values: Mapping[str, Any]) -> EventPayload:
    """The payload as a `foreach` body sees it: its fields and meta, and these locals
    beside the locals of the bodies around it."""
    if isinstance(payload, EventPayload):
        return EventPayload(payload, payload.meta, {**payload.locals, **local_values})
    return EventPayload(payload, None, local_values)


def platform_or(kind: str, name: str) -> str:
    """`platform` for an event the engine raises itself (`done.state.*`, and
    `error.execution` in a chart with `on_evaluation_error: raise`), else `kind`."""
    return PLATFORM if name.startswith(("done.state.", "error.execution")) else kind


def sent_by(
    payload: Mapping[str, Any], origin: str | None, invokeid: str | None, *, by_send: bool = True
) -> EventPayload:
    """A payload to hand `Chart.send` for an event another instance sent: `origin` is
    the sender's instance ID, `invokeid` the invoke id of the child it came from (None
    when it came from the parent or elsewhere). The family step (`statekit.engine.family`)
    builds these; a chart that reads `_event.origin`/`_event.invokeid` sees them.
    `by_send`: a member's `send` delivered it (`_event.origintype`), not the family
    itself (`done.invoke.<id>`, `error.invoke.<id>`)."""
    origintype = SENT_BY_SEND if by_send else None
    return EventPayload(payload, ("", EXTERNAL, origin, invokeid, None, origintype))


def sent_as(payload: Mapping[str, Any], send_id: str | None) -> EventPayload:
    """A payload to hand `Chart.send` for an event the instance's own undelayed `send`
    queued (`SentEvent`): `_event.sendid` is the send's `id:` (None without one) and
    `_event.origintype` says a `send` delivered it."""
    return EventPayload(payload, ("", EXTERNAL, None, None, send_id, SENT_BY_SEND))


def fired_send(timer_id: str, owner: str | None) -> EventPayload | None:
    """The meta source of an event a timer delivers: a delayed `send`'s (owner None)
    says a `send` delivered it, its sendid being the `id:` it was armed under (None for
    an unnamed one, armed as `send(<EVENT>)#<generation>`); None for an `after` timer."""
    if owner is not None:
        return None
    send_id = None if timer_id.startswith("send(") else timer_id
    return EventPayload({}, ("", EXTERNAL, None, None, send_id, SENT_BY_SEND))


def with_meta(
    event: tuple[str, Mapping[str, Any]], kind: str, sent: Mapping[str, Any] | None = None
) -> tuple[str, EventPayload]:
    """The event with its payload as an `EventPayload` of type `kind` (or `platform`);
    origin, invokeid, sendid and origintype come from `sent` (the payload as given to
    the engine, or the meta source of the timer delivering it) when `sent_by`,
    `sent_as` or `fired_send` made it, else they are null. The origin of the instance's
    own send (delayed or not) is the instance's ID (`instance_reading`: a chart that
    reads `_event.origin` is given it)."""
    name, payload = event
    if isinstance(payload, EventPayload):
        return name, payload
    origin = invokeid = send_id = origintype = None
    if isinstance(sent, EventPayload) and sent.meta is not None:
        origin, invokeid, send_id, origintype = sent.meta[2:]
    if origintype is not None and origin is None and invokeid is None:
        origin = STEP_INSTANCE.get()  # its own send: it came from the instance itself
    meta = (name, platform_or(kind, name), origin, invokeid, send_id, origintype)
    return name, EventPayload(payload, meta)

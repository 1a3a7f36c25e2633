"""`_event` (SCXML's system variable) in expressions: what the triggering event is, beside
its payload.

`_event.data.<field>` is `event.<field>`; `_event.name`, `_event.type`, `_event.origin`
and `_event.invokeid` are read from the payload mapping the engine evaluates with: for a
chart that reads them, the engine hands its expressions an `EventPayload` (the payload's
fields, and the `meta` of the event) instead of the plain payload. Charts that never read
them get the plain payload and pay nothing.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from statekit.compiler.value_types import STRING, BaseType, ValueType

MetaField: TypeAlias = typing.Literal["name", "type", "origin", "invokeid"]

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
}
"""The type of each `_event.<field>` besides `data`."""

META_INDEX: Final[Mapping[str, int]] = {"name": 0, "type": 1, "origin": 2, "invokeid": 3}
"""The position of each field in `EventPayload.meta`."""

EventMetaValues: TypeAlias = tuple[str, str, str | None, str | None]
"""(name, type, origin, invokeid) of one event."""


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


def sent_by(payload: Mapping[str, Any], origin: str | None, invokeid: str | None) -> EventPayload:
    """A payload to hand `Chart.send` for an event another instance sent: `origin` is
    the sender's instance ID, `invokeid` the invoke id of the child it came from (None
    when it came from the parent or elsewhere). The family step (`statekit.engine.family`)
    builds these; a chart that reads `_event.origin`/`_event.invokeid` sees them."""
    return EventPayload(payload, ("", EXTERNAL, origin, invokeid))


def with_meta(
    event: tuple[str, Mapping[str, Any]], kind: str, sent: Mapping[str, Any] | None = None
) -> tuple[str, EventPayload]:
    """The event with its payload as an `EventPayload` of type `kind` (or `platform`);
    origin and invokeid come from `sent` (the payload as given to the engine) when
    `sent_by` made it, else they are null."""
    name, payload = event
    if isinstance(payload, EventPayload):
        return name, payload
    origin, invokeid = (None, None)
    if isinstance(sent, EventPayload) and sent.meta is not None:
        origin, invokeid = sent.meta[2:]
    return name, EventPayload(payload, (name, platform_or(kind, name), origin, invokeid))

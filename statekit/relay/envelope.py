"""The form of a relayed message on the wire: a JSON body and the `Nats-Msg-Id` header.

The body is the canonical JSON (sorted keys, UTF-8) of

    {"chart": "payment", "instance_id": "p-1", "message_id": "e2/0", "sequence": 2,
     "type": "PaymentSucceeded", "payload": {...}, "key": "p-1/e2/0"}

`message_id` is the outbox's (`<event id>/<position>`), unique within its instance;
`key` is unique within the store: the instance ID percent-encoded (`/` included), a
`/`, then the message ID percent-encoded but for its `/` (so `p-1/e2/0` for ordinary
IDs), or `sha256:` and the digest of both when that would be longer than an ID may be
(`MAX_ID_BYTES`) or start with the reserved `statekit.`. The key is the `Nats-Msg-Id`
header, by which JetStream drops a second publish of the same message within the
stream's duplicate window, and the event ID under which a consumer applies it
(`statekit.relay.consumer`), by which the runner answers a redelivery ALREADY_APPLIED.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from statekit.compiler.canonical import canonical_json
from statekit.runner.command_checks import RESERVED_PREFIX
from statekit.runner.identifier_bounds import MAX_ID_BYTES
from statekit.runner.json_text import parse_json
from statekit.runner.outbox import OutboxMessage

MESSAGE_ID_HEADER = "Nats-Msg-Id"
"""JetStream's de-duplication header."""


class RelayedMessageError(ValueError):
    """A received message is not one the relay published (its body is not the envelope)."""


@dataclass(frozen=True, slots=True)
class RelayedMessage:
    """An outbox message as a consumer receives it from the broker (module docstring)."""

    chart: str
    instance_id: str
    message_id: str
    sequence: int
    type: str
    payload: Mapping[str, Any]
    key: str


def message_key(instance_id: str, message_id: str) -> str:
    """The store-wide key of an outbox message (module docstring)."""
    key = f"{quote(instance_id, safe='')}/{quote(message_id, safe='/')}"
    if len(key.encode("utf-8")) <= MAX_ID_BYTES and not key.startswith(RESERVED_PREFIX):
        return key
    digest = hashlib.sha256(canonical_json([instance_id, message_id]).encode("utf-8"))
    return f"sha256:{digest.hexdigest()}"


def encode_message(chart: str, message: OutboxMessage) -> tuple[bytes, dict[str, str]]:
    """The body and headers under which `message` of an instance of `chart` is published."""
    key = message_key(message.instance_id, message.message_id)
    body = {
        "chart": chart,
        "instance_id": message.instance_id,
        "message_id": message.message_id,
        "sequence": message.sequence,
        "type": message.type,
        "payload": dict(message.payload),
        "key": key,
    }
    return canonical_json(body).encode("utf-8"), {MESSAGE_ID_HEADER: key}


_FIELDS: dict[str, type] = {
    "chart": str,
    "instance_id": str,
    "message_id": str,
    "sequence": int,
    "type": str,
    "payload": dict,
    "key": str,
}


def decode_message(data: bytes) -> RelayedMessage:
    """The message whose envelope is `data`; `RelayedMessageError` saying what is wrong
    when it is not one."""
    try:
        body = parse_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RelayedMessageError(f"not a relayed statekit message: {exc}") from exc
    if not isinstance(body, dict):
        raise RelayedMessageError("not a relayed statekit message: the body is not an object")
    for name, kind in _FIELDS.items():
        value = body.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise RelayedMessageError(
                f"not a relayed statekit message: {name!r} is missing or not a {kind.__name__}"
            )
    return RelayedMessage(
        chart=body["chart"],
        instance_id=body["instance_id"],
        message_id=body["message_id"],
        sequence=body["sequence"],
        type=body["type"],
        payload=body["payload"],
        key=body["key"],
    )

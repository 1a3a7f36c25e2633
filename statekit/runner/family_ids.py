"""The identifiers a family step derives: its members' event IDs and its children's
instance IDs (`runner.family_step`), deterministic so that a family step decided again
(a redelivery of its outer event) names the same rows."""

from __future__ import annotations

import hashlib

from statekit.runner.identifier_bounds import MAX_ID_BYTES, utf8_length

CHILD_ENDED = "CHILD_ENDED"
"""The reason an event for a child that is done or cancelled is REJECTED."""

FAMILY_PREFIX = "statekit.family/"
"""The event IDs of the steps a family step makes its members take."""


def member_event_id(instance_id: str, event_id: str, n: int) -> str:
    """The event ID of the `n`th delivery of the family step of `event_id` on
    `instance_id` (a hash of the two when the whole is over `MAX_ID_BYTES`)."""
    whole = f"{FAMILY_PREFIX}{instance_id}/{event_id}/{n}"
    if utf8_length(whole) <= MAX_ID_BYTES:
        return whole
    digest = hashlib.sha256(f"{instance_id}\0{event_id}".encode("utf-8", "surrogatepass"))
    return f"{FAMILY_PREFIX}sha256:{digest.hexdigest()}/{n}"


def child_instance_id(parent: str, invoke_id: str, parent_version: int) -> str:
    """The deterministic ID of the child an invocation starts (`<parent>/<invoke
    id>/<parent version at start>`)."""
    return f"{parent}/{invoke_id}/{parent_version}"


MESSAGE_PREFIX = "statekit.message/"
"""The event IDs of messages between instances (reserved: no caller's event ID starts so)."""
REPLY_PREFIX = "statekit.reply/"
"""The event IDs of replies (the receiving step's classification sent back)."""


def _bounded(prefix: str, body: str) -> str:
    """`prefix + body`, or `prefix` and the body's SHA-256 when that is over the bound."""
    whole = prefix + body
    if utf8_length(whole) <= MAX_ID_BYTES:
        return whole
    return prefix + "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def message_event_id(sender: str, sender_version: int, index: int) -> str:
    """The event ID a message is applied under on its receiver: one per (sender, version
    its step produced, index in that step), so that a redelivery is ALREADY_APPLIED."""
    return _bounded(MESSAGE_PREFIX, f"{sender}/{sender_version}/{index}")


def reply_event_id(message_event_id: str) -> str:
    """The event ID of the reply to the message applied under `message_event_id`."""
    return _bounded(REPLY_PREFIX, message_event_id)

"""The event IDs the runner derives for messages between instances and their replies
(`runner.message_delivery`), deterministic so that a message written again is applied
once, and bounded by `MAX_ID_BYTES` (a hash past it)."""

from __future__ import annotations

import hashlib

from statekit.runner.identifier_bounds import MAX_ID_BYTES, utf8_length

MESSAGE_PREFIX = "statekit.message/"
"""The event IDs of messages between instances (reserved: no caller's event ID starts so)."""
REPLY_PREFIX = "statekit.reply/"
"""The event IDs of replies (the receiving step's classification sent back)."""


FAMILY_PREFIX = "statekit.family/"
"""The event IDs of the steps a family step makes its members take (the router's own,
in the runner's reserved namespace)."""


def bounded_id(prefix: str, body: str) -> str:
    """`prefix + body`, or `prefix` and the body's SHA-256 when that is over the bound."""
    whole = prefix + body
    if utf8_length(whole) <= MAX_ID_BYTES:
        return whole
    return prefix + "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def message_event_id(sender: str, sender_version: int, index: int) -> str:
    """The event ID a message is applied under on its receiver: one per (sender, version
    its step produced, index in that step), so that a redelivery is ALREADY_APPLIED."""
    return bounded_id(MESSAGE_PREFIX, f"{sender}/{sender_version}/{index}")


def reply_event_id(message_event_id: str) -> str:
    """The event ID of the reply to the message applied under `message_event_id`."""
    return bounded_id(REPLY_PREFIX, message_event_id)

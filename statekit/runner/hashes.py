"""The runner's hashes: of an event's type and payload, and of a stored text.

Both hash canonical JSON (`statekit.compiler.canonical.canonical_json`), so
equal events give equal hashes whatever the key order or spacing they came in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.canonical import canonical_json


@dataclass(frozen=True, slots=True)
class EncodedPayload:
    """An event payload as stored: its canonical JSON and the sha256 of `[type, payload]`."""

    text: str
    sha256: str


def encode_payload(event_type: str, payload: Mapping[str, Any]) -> EncodedPayload:
    """The payload's canonical JSON and the sha256 of `[type, payload]` in that form:
    equal events, equal hashes."""
    text, digest = payload_text_and_digest(event_type, payload)
    return EncodedPayload(text=text, sha256=digest.hex())


def payload_text_and_digest(event_type: str, payload: Mapping[str, Any]) -> tuple[str, bytes]:
    """`encode_payload` as a pair (text, the 32-byte sha256), without the record: once per
    event (the runner's event row carries the bytes to the store: `EventRow.payload_digest`)."""
    text = canonical_json(payload)
    return text, payload_digest(event_type, text)


def payload_digest(event_type: str, text: str) -> bytes:
    """The 32-byte sha256 of `[type, payload]` for a payload already in its canonical JSON
    `text` (what `encode_payload` hashes; the store recomputes it on read, schema 6)."""
    whole = f"{type_head(event_type)}{text}]"  # == canonical_json([event_type, payload])
    return hashlib.sha256(whole.encode("utf-8")).digest()


_TYPE_HEADS: dict[str, str] = {}  # event type → `[<type as JSON>,`, the head of the hashed text


def type_head(event_type: str) -> str:
    """`[<event_type as canonical JSON>,`: how the hashed text (and the stored evidence)
    begins, encoded once per event type."""
    head = _TYPE_HEADS.get(event_type)
    if head is None:
        if len(_TYPE_HEADS) >= 4096:
            _TYPE_HEADS.clear()
        head = _TYPE_HEADS[event_type] = f"[{canonical_json(event_type)},"
    return head


def text_sha256(text: str) -> str:
    """sha256 hex of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

"""The runner's hashes: of an event's type and payload, and of a stored text.

Both hash canonical JSON (`statekit.compiler.serialize.canonical_json`), so
equal events give equal hashes whatever the key order or spacing they came in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.serialize import canonical_json


@dataclass(frozen=True, slots=True)
class EncodedPayload:
    """An event payload as stored: its canonical JSON and the sha256 of `[type, payload]`."""

    text: str
    sha256: str


def encode_payload(event_type: str, payload: Mapping[str, Any]) -> EncodedPayload:
    """The payload's canonical JSON and the sha256 of `[type, payload]` in that form:
    equal events, equal hashes."""
    text = canonical_json(payload)
    return EncodedPayload(text=text, sha256=payload_digest(event_type, text).hex())


def payload_digest(event_type: str, text: str) -> bytes:
    """The 32-byte sha256 of `[type, payload]` for a payload already in its canonical JSON
    `text` (what `encode_payload` hashes; the store recomputes it on read, schema 6)."""
    whole = f"[{canonical_json(event_type)},{text}]"  # == canonical_json([event_type, payload])
    return hashlib.sha256(whole.encode("utf-8")).digest()


def text_sha256(text: str) -> str:
    """sha256 hex of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

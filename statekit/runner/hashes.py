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
    whole = f"[{canonical_json(event_type)},{text}]"  # == canonical_json([event_type, payload])
    return EncodedPayload(text=text, sha256=hashlib.sha256(whole.encode("utf-8")).hexdigest())


def text_sha256(text: str) -> str:
    """sha256 hex of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

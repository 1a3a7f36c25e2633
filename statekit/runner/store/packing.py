"""How an event row's payload hash and evidence are kept on disk since schema 6.

Both are packed by the store on the way in and unpacked on the way out, so
every reader above the store (the history API, `verify`, the duplicate checks)
sees the same values as before:

- **payload hash**: the sha256 of `[type, payload]` can be recomputed from the
  row's own type and payload, so the row keeps only its first `HASH_CHECK`
  bytes, a check that the payload is still the one hashed. On read, when the
  recomputed hash starts with them, the whole recomputed hash is given; when it
  does not (the payload or the check was changed), the stored bytes are given
  as they are (16 hex digits), which compares equal to no payload's hash: a
  redelivery is then a payload conflict and `verify` reports the row. A hash
  that did not match its row when packed is kept whole. Packing compares the
  row's hash with the one its writer computed from the row's very type and
  payload text, which the runner's rows carry (`EventRow.payload_digest`), or
  else with the hash computed here.
- **evidence**: the compact form (`statekit.runner.evidence`) begins with the
  first microstep's event type and payload, which are the row's own type and
  payload (its canonical JSON text, byte for byte) for every event the runner
  records. The row keeps `~` followed by the rest of the text (no JSON text
  begins with it); unpacking puts `[2,[[<type>,<payload>,` back. Any other text (the full form, a
  migration entry, a step whose event is not the row's) is kept unchanged.

- **status**: `APPLIED`, what nearly every history entry is, is kept as NULL;
  the other statuses as they are.

Unpacking gives back exactly what was packed (a text the runner writes never begins
with `~`); nothing is lost.
"""

from __future__ import annotations

from typing import Any

from statekit.runner.hashes import payload_digest, type_head

HASH_CHECK = 8
"""How many leading bytes of the payload hash an event row keeps."""
_COMPACT_HEAD = "[2,["  # then `type_head`: `[<type>,`
_PACKED_HEAD = "~"


def pack_hash(event_type: str, payload: str, digest: bytes) -> bytes:
    """What the row stores for the payload hash `digest`: its first `HASH_CHECK` bytes when
    it is the hash of this type and payload, else all of it."""
    if len(digest) == 32 and payload_digest(event_type, payload) == digest:
        return digest[:HASH_CHECK]
    return digest


def pack_hex_hash(
    event_type: str, payload: str, hexdigest: str, computed: bytes | None = None
) -> bytes:
    """`pack_hash` of a hash given as hex (an `EventRow`'s). `computed`: the 32 bytes its
    writer hashed from this very type and payload text (`EventRow.payload_digest`), so
    that only its comparison with `hexdigest` is left; without it the hash of the row is
    computed here. Either way, a hex that is not that hash is kept whole."""
    full = payload_digest(event_type, payload) if computed is None else computed
    if full.hex() == hexdigest:
        return full[:HASH_CHECK]
    return bytes.fromhex(hexdigest)


def unpack_hash(event_type: Any, payload: Any, stored: Any) -> str:
    """The payload hash of a row, as hex (see the module docstring); a stored text (a
    value no migration could convert) as it is, for `verify` to report."""
    if not isinstance(stored, (bytes, memoryview)):
        return str(stored)
    value = bytes(stored)
    if len(value) == HASH_CHECK and isinstance(event_type, str) and isinstance(payload, str):
        full = payload_digest(event_type, payload)
        if full[:HASH_CHECK] == value:
            return full.hex()
    return value.hex()


APPLIED = "APPLIED"


def pack_status(status: str) -> str | None:
    """What the row stores for an event's status (NULL for `APPLIED`)."""
    return None if status == APPLIED else status


def unpack_status(stored: Any) -> Any:
    """An event's status as read (`APPLIED` for NULL)."""
    return APPLIED if stored is None else stored


def _head(event_type: str, payload: str) -> str:
    return f"{_COMPACT_HEAD}{type_head(event_type)}{payload},"


def pack_evidence(event_type: str, payload: str, evidence: str) -> str:
    """The evidence text as the row keeps it (see the module docstring)."""
    head = _head(event_type, payload)
    if evidence.startswith(head):
        return _PACKED_HEAD + evidence[len(head) :]
    return evidence


def unpack_evidence(event_type: Any, payload: Any, stored: Any) -> Any:
    """The evidence text of a row as the runner wrote it (anything else unchanged)."""
    if (
        isinstance(stored, str)
        and stored.startswith(_PACKED_HEAD)
        and isinstance(event_type, str)
        and isinstance(payload, str)
    ):
        return _head(event_type, payload) + stored[len(_PACKED_HEAD) :]
    return stored


def migrated_hash(event_type: Any, payload: Any, stored: Any) -> Any:
    """What SQLite's migration 6 stores for a row's payload hash (`statekit_pack_hash`):
    32 bytes packed as `pack_hash` does, any other value (text, a damaged row) as it is."""
    if isinstance(stored, bytes) and isinstance(event_type, str) and isinstance(payload, str):
        return pack_hash(event_type, payload, stored)
    return stored


def migrated_evidence(event_type: Any, payload: Any, stored: Any) -> Any:
    """What SQLite's migration 6 stores for a row's evidence (`statekit_pack_evidence`)."""
    if isinstance(stored, str) and isinstance(event_type, str) and isinstance(payload, str):
        return pack_evidence(event_type, payload, stored)
    return stored

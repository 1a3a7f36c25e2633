"""Turning a store back into the form a statekit before schema 5 wrote (tests of upgrades).

Schema 5 stores an event's payload hash as 32 bytes and writes evidence in the
compact form; before it, the hash was 64 hex characters and the evidence was
always the full JSON object. `before_schema_5` rewrites every event row so
and removes migration 5's record, so that reopening the store upgrades it
again, as it upgrades a store written by that older statekit.
"""

from __future__ import annotations

from statekit.compiler.serialize import canonical_json
from statekit.runner.evidence import stored_evidence
from statekit.runner.store.base import Store


def before_schema_5(store: Store) -> None:
    """Rewrite `store`'s event rows in their pre-schema-5 form (see the module docstring)."""
    with store.write():
        rows = store.execute(
            "SELECT instance_id, sequence, event_id, evidence FROM statekit_events"
        ).fetchall()
        if store.dialect == "postgresql":
            store.execute(
                "ALTER TABLE statekit_events ALTER COLUMN payload_sha256 TYPE TEXT "
                "USING encode(payload_sha256, 'hex')"
            )
        else:
            store.execute("UPDATE statekit_events SET payload_sha256 = lower(hex(payload_sha256))")
        for instance_id, sequence, event_id, evidence in rows:
            full = canonical_json(stored_evidence(evidence, event_id, "evidence"))
            store.execute(
                "UPDATE statekit_events SET evidence = ? WHERE instance_id = ? AND sequence = ?",
                (full, instance_id, sequence),
            )
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 5")

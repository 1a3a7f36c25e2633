"""Turning a store back into the form a statekit before schema 6 or 5 wrote (upgrade tests).

Schema 6 packs an event row's payload hash, evidence and status
(`statekit.runner.store.packing`), keeps no `created_at` on an outbox row that
is its event's, indexes dead messages instead of every message by status, and
(SQLite) keeps the events table without a rowid; PostgreSQL gains
`statekit_moved`. `before_schema_6` undoes all of it and removes migration 6's
record (after `before_schema_9`, `before_schema_8` and `before_schema_7`, which put the
armed timers back into the instance rows and drop the shard layout and retention
tables).

Schema 5 stores an event's payload hash as 32 bytes and writes evidence in the
compact form; before it, the hash was 64 hex characters and the evidence was
always the full JSON object. `before_schema_5` rewrites every event row so
and removes migration 5's record, so that reopening the store upgrades it
again, as it upgrades a store written by that older statekit.
"""

from __future__ import annotations

import json

from statekit.compiler.canonical import canonical_json
from statekit.runner.evidence import stored_evidence
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import INSPECTOR_INDEXES

_EVENTS_V5 = """CREATE TABLE statekit_events_v5 (
    instance_id TEXT NOT NULL,
    sequence BIGINT NOT NULL CHECK (sequence >= 1),
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('APPLIED', 'ALREADY_APPLIED', 'REJECTED')),
    chart_version INTEGER NOT NULL,
    evidence TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    idempotency_key TEXT,
    clock_ms BIGINT,
    PRIMARY KEY (instance_id, sequence),
    UNIQUE (instance_id, event_id)
)"""
_IDEMPOTENCY = (
    "CREATE UNIQUE INDEX statekit_events_idempotency ON statekit_events "
    "(instance_id, type, idempotency_key) WHERE idempotency_key IS NOT NULL"
)


_EVENTS_V11 = """CREATE TABLE statekit_events_v11 (
    instance_id TEXT NOT NULL,
    sequence BIGINT NOT NULL CHECK (sequence >= 1),
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL,
    status TEXT CHECK (status IN ('APPLIED', 'ALREADY_APPLIED', 'REJECTED')),
    chart_version INTEGER NOT NULL,
    evidence TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    idempotency_key TEXT,
    clock_ms BIGINT,
    PRIMARY KEY (instance_id, sequence),
    UNIQUE (instance_id, event_id)
) WITHOUT ROWID"""
_EVENT_INDEXES_V10 = [s for s in INSPECTOR_INDEXES if " ON statekit_events " in s]


def before_schema_12(store: Store) -> None:
    """Put back the event indexes of schema 11 (the event ID unique as `(instance_id,
    event_id)`, the business key as `(instance_id, type, idempotency_key)`, each with
    the inspector's index of its own) and drop migration 12's record."""
    with store.write():
        if store.dialect == "sqlite":
            store.execute(_EVENTS_V11)
            store.execute("INSERT INTO statekit_events_v11 SELECT * FROM statekit_events")
            store.execute("DROP TABLE statekit_events")
            store.execute("ALTER TABLE statekit_events_v11 RENAME TO statekit_events")
        else:
            store.execute(
                "ALTER TABLE statekit_events DROP CONSTRAINT "
                "statekit_events_event_id_instance_id_key"
            )
            store.execute(
                "ALTER TABLE statekit_events ADD CONSTRAINT "
                "statekit_events_instance_id_event_id_key UNIQUE (instance_id, event_id)"
            )
            store.execute("DROP INDEX statekit_events_idempotency")
        store.execute(_IDEMPOTENCY)
        for statement in _EVENT_INDEXES_V10:
            store.execute(statement)
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 12")


def before_schema_11(store: Store) -> None:
    """Drop what schema 11 added (the family links and the inbox between instances; a
    store past schema 11 first gets schema 11's event indexes back)."""
    if store.schema_version() >= 12:
        before_schema_12(store)
    with store.write():
        store.execute("DROP TABLE statekit_family_links")
        store.execute("DROP TABLE statekit_instance_inbox")
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 11")


def before_schema_10(store: Store) -> None:
    """Drop what schema 10 added (the inspector's indexes) and its record (a store past
    schema 10 first loses schema 11's tables)."""
    if store.schema_version() >= 11:
        before_schema_11(store)
    with store.write():
        for statement in INSPECTOR_INDEXES:
            name = statement.split()[2]
            store.execute(f"DROP INDEX {name}")
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 10")


def before_schema_9(store: Store) -> None:
    """Put every instance's armed timers back into its row's `timers` text (the form
    before schema 9: the counter and the timers, canonical JSON), drop the timer rows'
    records and migration 9's record (a store past schema 9 first loses schema 10's
    indexes)."""
    if store.schema_version() >= 10:
        before_schema_10(store)
    with store.write():
        for instance_id in store.instance_ids():
            row = store.instance(instance_id)
            assert row is not None
            if row.columns.timers is None:
                continue
            generation = json.loads(row.columns.timers)["timer_generation"]
            rows = sorted(store.timers(instance_id), key=lambda r: r.generation)
            records = ",".join(str(r.record) for r in rows)
            store.execute(
                "UPDATE statekit_instances SET timers = ? WHERE instance_id = ?",
                (f'{{"timer_generation":{generation},"timers":[{records}]}}', instance_id),
            )
        store.execute("ALTER TABLE statekit_timers DROP COLUMN record")
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 9")


def before_schema_8(store: Store) -> None:
    """Drop what schema 8 added (the shard layout table) and its record."""
    with store.write():
        store.execute("DROP TABLE statekit_shard")
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 8")


def before_schema_7(store: Store) -> None:
    """Drop what schema 7 added (the retention watermarks) and its record."""
    with store.write():
        store.execute("DROP TABLE statekit_retention")
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 7")


def before_schema_6(store: Store) -> None:
    """Rewrite `store` in the form statekit wrote at schema 5 (see the module docstring);
    a store past schema 6 first loses what schemas 7, 8 and 9 added."""
    if store.schema_version() >= 9:
        before_schema_9(store)
    if store.schema_version() >= 8:
        before_schema_8(store)
    if store.schema_version() >= 7:
        before_schema_7(store)
    with store.write():
        events = [e for i in store.instance_ids() for e in store.events(i)]
        outbox = store.outbox(["pending", "delivered", "dead"])
        values = [
            (e.payload_sha256, e.evidence, e.status, e.instance_id, e.sequence) for e in events
        ]
        if store.dialect == "sqlite":
            store.execute(_EVENTS_V5)
            store.execute(
                "INSERT INTO statekit_events_v5 SELECT instance_id, sequence, event_id, type, "
                "payload, payload_sha256, 'APPLIED', chart_version, evidence, recorded_at, "
                "idempotency_key, clock_ms FROM statekit_events"
            )
            store.execute("DROP TABLE statekit_events")
            store.execute("ALTER TABLE statekit_events_v5 RENAME TO statekit_events")
            store.execute(_IDEMPOTENCY)
        else:
            store.execute("DROP FUNCTION statekit_moved")
        for digest, evidence, status, instance_id, sequence in values:
            store.execute(
                "UPDATE statekit_events SET payload_sha256 = ?, evidence = ?, status = ? "
                "WHERE instance_id = ? AND sequence = ?",
                (bytes.fromhex(digest), evidence, status, instance_id, sequence),
            )
        for message in outbox:
            store.execute(
                "UPDATE statekit_outbox SET created_at = ? WHERE id = ?",
                (message.created_at, message.id),
            )
        if store.dialect == "postgresql":
            store.execute("ALTER TABLE statekit_events ALTER COLUMN status SET NOT NULL")
            store.execute("ALTER TABLE statekit_outbox ALTER COLUMN created_at SET NOT NULL")
        store.execute("DROP INDEX statekit_outbox_dead")
        store.execute("CREATE INDEX statekit_outbox_status ON statekit_outbox (status, id)")
        store.execute("DELETE FROM statekit_schema_migrations WHERE version = 6")


def before_schema_5(store: Store) -> None:
    """Rewrite `store`'s event rows in their pre-schema-5 form (see the module docstring);
    a store at schema 6 is first taken back to schema 5."""
    if store.schema_version() >= 6:
        before_schema_6(store)
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

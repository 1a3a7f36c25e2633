"""The SQL of schema versions 3 to 6 per dialect (moved here from `store.migrations`,
whose docstring says what each version does): business idempotency keys (3), time (4),
the payload hash as bytes (5) and compact rows with the raising version check (6);
versions 4 and 6 rebuild SQLite's events (and outbox) tables with the same rows."""

from __future__ import annotations

IDEMPOTENCY = (
    "ALTER TABLE statekit_events ADD COLUMN idempotency_key TEXT",
    "CREATE UNIQUE INDEX statekit_events_idempotency ON statekit_events "
    "(instance_id, type, idempotency_key) WHERE idempotency_key IS NOT NULL",
)

_EVENT_COLUMNS_V3 = (
    "instance_id, sequence, event_id, type, payload, payload_sha256, status, chart_version, "
    "evidence, recorded_at, idempotency_key"
)
_STATUS_V4 = "status IN ('APPLIED', 'ALREADY_APPLIED', 'REJECTED')"
_TIME_COMMON = (
    "ALTER TABLE statekit_instances ADD COLUMN timers TEXT",
    "ALTER TABLE statekit_instances ADD COLUMN start_clock_ms BIGINT",
    """CREATE TABLE statekit_timers (
        instance_id TEXT NOT NULL,
        timer_id TEXT NOT NULL,
        generation BIGINT NOT NULL,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        due_ms BIGINT NOT NULL,
        sequence BIGINT NOT NULL,
        PRIMARY KEY (instance_id, timer_id)
    )""",
    "CREATE INDEX statekit_timers_due ON statekit_timers (due_ms, generation)",
)
TIME_SQLITE = (
    *_TIME_COMMON,
    f"""CREATE TABLE statekit_events_v4 (
        instance_id TEXT NOT NULL,
        sequence BIGINT NOT NULL CHECK (sequence >= 1),
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        payload_sha256 TEXT NOT NULL,
        status TEXT NOT NULL CHECK ({_STATUS_V4}),
        chart_version INTEGER NOT NULL,
        evidence TEXT NOT NULL,
        recorded_at REAL NOT NULL,
        idempotency_key TEXT,
        clock_ms BIGINT,
        PRIMARY KEY (instance_id, sequence),
        UNIQUE (instance_id, event_id)
    )""",
    f"INSERT INTO statekit_events_v4 ({_EVENT_COLUMNS_V3}) "
    f"SELECT {_EVENT_COLUMNS_V3} FROM statekit_events",
    "DROP TABLE statekit_events",
    "ALTER TABLE statekit_events_v4 RENAME TO statekit_events",
    IDEMPOTENCY[1],
)
TIME_POSTGRESQL = (
    *_TIME_COMMON,
    "ALTER TABLE statekit_events ADD COLUMN clock_ms BIGINT",
    "ALTER TABLE statekit_events DROP CONSTRAINT statekit_events_status_check",
    f"ALTER TABLE statekit_events ADD CONSTRAINT statekit_events_status_check CHECK ({_STATUS_V4})",
)

# The payload hash of an event is internal (the history API gives it as hex): 32 bytes
# instead of 64 hex characters. A text that is not a hash (a tampered row) is kept as its
# bytes (PostgreSQL) or as it is (SQLite), so that `verify` still reports it.
BINARY_HASH_SQLITE = (
    "UPDATE statekit_events SET payload_sha256 = statekit_unhex(payload_sha256) "
    "WHERE typeof(payload_sha256) = 'text'",
)
BINARY_HASH_POSTGRESQL = (
    "ALTER TABLE statekit_events ALTER COLUMN payload_sha256 TYPE BYTEA USING CASE "
    "WHEN payload_sha256 ~ '^[0-9a-f]{64}$' THEN decode(payload_sha256, 'hex') "
    "ELSE convert_to(payload_sha256, 'UTF8') END",
)


def unhex(value: str | bytes | None) -> str | bytes | None:
    """What the SQLite migration 5 stores for an event's payload hash: its 32 bytes when
    it is 64 lower-case hex digits, else the value unchanged."""
    if isinstance(value, str) and len(value) == 64 and value == value.lower():
        try:
            return bytes.fromhex(value)
        except ValueError:
            return value
    return value


STALE_VERSION = "SK409"
"""The SQLSTATE `statekit_moved` raises (PostgreSQL): an instance update found the row no
longer at the version its transaction read."""
# PostgreSQL: the instance update's version check as an error, so that writes sent in one
# query with the COMMIT cannot commit a stale write (`PostgresStore.write_decided`).
_MOVED_CHECK_POSTGRESQL = (
    "CREATE OR REPLACE FUNCTION statekit_moved(moved BIGINT) RETURNS BIGINT "
    "LANGUAGE plpgsql AS $$ BEGIN IF moved <> 1 THEN RAISE EXCEPTION USING "
    "MESSAGE = 'the instance left the version its transaction read', "
    f"ERRCODE = '{STALE_VERSION}'; END IF; RETURN moved; END $$",
)
_EVENT_COLUMNS_V6 = (
    "instance_id, sequence, event_id, type, payload, payload_sha256, status, chart_version, "
    "evidence, recorded_at, idempotency_key, clock_ms"
)
_OUTBOX_COLUMNS_V6 = (
    "id, instance_id, message_id, sequence, type, payload, status, attempts, next_attempt_at, "
    "claimed_by, claimed_until, last_error, created_at, delivered_at"
)
# The event whose outbox row says when it was created: an outbox row of an event keeps no
# time of its own when it is the event's (`created_at` NULL, read as the event's).
EVENT_TIME = (
    "(SELECT e.recorded_at FROM statekit_events e WHERE e.instance_id = o.instance_id "
    "AND e.sequence = o.sequence)"
)
_DEAD_INDEX = "CREATE INDEX statekit_outbox_dead ON statekit_outbox (id) WHERE status = 'dead'"
# SQLite: the events table without a rowid (its key is the lookup: no separate key index),
# hashes and evidence packed (`store.packing`); the outbox with a nullable created_at and,
# instead of an index of every row by status, one of the dead messages only.
COMPACT_SQLITE = (
    f"""CREATE TABLE statekit_events_v6 (
        instance_id TEXT NOT NULL,
        sequence BIGINT NOT NULL CHECK (sequence >= 1),
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        payload_sha256 TEXT NOT NULL,
        status TEXT CHECK ({_STATUS_V4}),
        chart_version INTEGER NOT NULL,
        evidence TEXT NOT NULL,
        recorded_at REAL NOT NULL,
        idempotency_key TEXT,
        clock_ms BIGINT,
        PRIMARY KEY (instance_id, sequence),
        UNIQUE (instance_id, event_id)
    ) WITHOUT ROWID""",
    f"INSERT INTO statekit_events_v6 ({_EVENT_COLUMNS_V6}) SELECT instance_id, sequence, "
    "event_id, type, payload, statekit_pack_hash(type, payload, payload_sha256), "
    "NULLIF(status, 'APPLIED'), "
    "chart_version, statekit_pack_evidence(type, payload, evidence), recorded_at, "
    "idempotency_key, clock_ms FROM statekit_events",
    "DROP TABLE statekit_events",
    "ALTER TABLE statekit_events_v6 RENAME TO statekit_events",
    IDEMPOTENCY[1],
    """CREATE TABLE statekit_outbox_v6 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        sequence BIGINT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL DEFAULT 0,
        claimed_by TEXT,
        claimed_until REAL,
        last_error TEXT,
        created_at REAL,
        delivered_at REAL,
        UNIQUE (instance_id, message_id)
    )""",
    f"INSERT INTO statekit_outbox_v6 ({_OUTBOX_COLUMNS_V6}) SELECT id, instance_id, "
    "message_id, sequence, type, payload, status, attempts, next_attempt_at, claimed_by, "
    f"claimed_until, last_error, CASE WHEN created_at = {EVENT_TIME} THEN NULL "
    "ELSE created_at END, delivered_at FROM statekit_outbox o",
    # the numbering goes on where it was (a message ID is never reused)
    "UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT MAX(seq) FROM sqlite_sequence WHERE "
    "name = 'statekit_outbox')) WHERE name = 'statekit_outbox_v6' AND EXISTS (SELECT 1 FROM "
    "sqlite_sequence WHERE name = 'statekit_outbox')",
    "DROP TABLE statekit_outbox",
    "ALTER TABLE statekit_outbox_v6 RENAME TO statekit_outbox",
    "CREATE INDEX statekit_outbox_pending ON statekit_outbox (instance_id, id) "
    "WHERE status = 'pending'",
    _DEAD_INDEX,
)
# PostgreSQL: the same packing done in SQL (a row whose type's JSON PostgreSQL writes
# otherwise than statekit is left whole: still read correctly), the outbox likewise.
_HEAD_POSTGRESQL = "'[2,[[' || to_json(type)::text || ',' || payload || ','"
COMPACT_POSTGRESQL = (
    *_MOVED_CHECK_POSTGRESQL,
    "UPDATE statekit_events SET payload_sha256 = substring(payload_sha256 from 1 for 8) "
    "WHERE length(payload_sha256) = 32 AND payload_sha256 = "
    "sha256(convert_to('[' || to_json(type)::text || ',' || payload || ']', 'UTF8'))",
    f"UPDATE statekit_events SET evidence = '~' || substr(evidence, length({_HEAD_POSTGRESQL}) "
    f"+ 1) WHERE starts_with(evidence, {_HEAD_POSTGRESQL})",
    "ALTER TABLE statekit_events ALTER COLUMN status DROP NOT NULL",
    "UPDATE statekit_events SET status = NULL WHERE status = 'APPLIED'",
    "ALTER TABLE statekit_outbox ALTER COLUMN created_at DROP NOT NULL",
    "UPDATE statekit_outbox o SET created_at = NULL FROM statekit_events e WHERE "
    "e.instance_id = o.instance_id AND e.sequence = o.sequence AND e.recorded_at = o.created_at",
    "DROP INDEX statekit_outbox_status",
    _DEAD_INDEX,
)

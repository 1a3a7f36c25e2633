"""The runner's schema, as numbered migrations per dialect.

`statekit_schema_migrations` records which migrations a database has; opening
a store applies the missing ones in order, in one transaction, under the
store's write lock (SQLite `BEGIN IMMEDIATE`, a PostgreSQL advisory lock), so
that a later schema change upgrades an existing database in place and two
processes opening a new database at once do not race. A database whose
schema is newer than this statekit is refused (`SchemaVersionError`).

Tables (version 1):

- `statekit_charts`: every chart version a runner used (digest, name,
  version, and its YAML source when known, so `statekit verify` can replay);
- `statekit_instances`: one row per instance: chart name/version/digest,
  version, configuration, context, history (canonical JSON), the creation
  context override;
- `statekit_events`: the accepted events, `(instance_id, sequence)` primary
  key with sequence = the version it produced, `(instance_id, event_id)`
  unique, payload and its sha256, status, chart version, evidence;
- `statekit_rejections`: the audit of rejections and history conflicts;
- `statekit_outbox`: emitted messages with delivery state (pending,
  delivered, dead), attempts, backoff and the dispatcher's claim;
- `statekit_snapshots`: state at a sequence with its sha256, chart digest
  and engine version;
- `statekit_inbox`: (consumer, instance, message ID) processed by consumers.

Version 2 makes every integer column signed 64-bit on PostgreSQL (version 1
had `INTEGER`, 32-bit, for chart versions and outbox attempts); SQLite
integers already are. The range is `rows.STORED_INT_MIN`..`STORED_INT_MAX`.

Version 3 adds `statekit_events.idempotency_key` (the business key of the
event's fact, `statekit.runner.keys`; NULL when its event declares none) and
a unique index on `(instance_id, type, idempotency_key)` where it is set: the
database refuses a second accepted event of one fact in the transaction that
inserts it.

Version 4 is time (durable timers, `statekit.runner.timers`): the table
`statekit_timers` (one row per armed timer: instance, timer ID, the generation
that armed it, the event and payload it delivers, its due time in epoch
milliseconds, the sequence of the event that armed it; `(instance_id,
timer_id)` unique, an index on the due time), `statekit_events.clock_ms` (the
commit clock's reading the event's due times were computed from; NULL for
events written before), the status `REJECTED` for a history entry (a timer
delivery the chart rejected: it consumed the timer), and on the instance row
`timers` (the armed timers and the arming counter as canonical JSON, NULL
while nothing was ever armed) and `start_clock_ms` (the clock reading its
creation used). SQLite cannot change a CHECK constraint, so its events table
is rebuilt with the same rows.

Version 5 stores `statekit_events.payload_sha256` as its 32 bytes (a BLOB in
SQLite, `BYTEA` in PostgreSQL) instead of 64 hex characters, converting the
rows already there; the store reads it back as hex. Evidence written from
then on is in the compact form (`statekit.runner.evidence`); older rows keep
the full form, which is read as before.

Version 6 makes the rows per event smaller (`statekit.runner.store.packing`):
an event's payload hash is kept as its first 8 bytes (recomputed from the
row's type and payload on read) and the compact evidence without the first
microstep's event type and payload (the row's own); in SQLite the events
table has no rowid (its primary key is its lookup, so it needs no separate
key index). An outbox message keeps no `created_at` of its own when it is its
event's `recorded_at` (NULL, read as the event's), and the index of every
message by status gives way to one of the dead messages (pending ones have
theirs). Rows already there are converted; a value that does not match its
row is kept whole. An event's status `APPLIED` is kept as NULL. On
PostgreSQL it also adds `statekit_moved`, which raises SQLSTATE SK409 when an
instance update moved no row, so that the writes of an event can be sent
with the COMMIT in one round trip.

Version 7 is retention (`statekit.runner.retention`): the table
`statekit_retention`, one row per instance something was pruned of: the
sequence its events were thinned through (`events_through`: those rows keep
their event ID, sequence, type, status, full payload hash, idempotency key and
chart version, their payload and evidence are emptied; the snapshot at that
sequence is where `verify` and `rebuild` start), the sequence its delivered
outbox messages were removed through (`outbox_through`), and when it was last
pruned.

Version 8 adds `statekit_shard` (`statekit.runner.sharding`): at most one row,
the place of this database in a shard set (its index, the count of shards and
the identity of the set), written when a `ShardedRunner` first opens it and
checked on every later opening, so that shards given in another order, a
missing shard or a changed count are refused instead of routing instances to
the wrong database. A database used on its own has no row.

Version 9 makes the timer rows an instance's armed timers
(`statekit.runner.store.timer_records`): each row also holds its timer's record, the
instance row's `timers` only the arming counter, so an event writes only the timers it
armed or cancelled.

Version 10 indexes what the inspector (`statekit inspect`) lists and searches by, so that
its pages stay bounded on a store of a million events (docs/inspect.md says what each
query costs): the instances by last activity (`updated_at`, with the ID that breaks
ties) and by chart, chart version and configuration (the counts per state read that
index alone), the events by event ID and by idempotency key, the rejections by event
ID. Writers pay for them: an event's insert updates one or two more index entries and
its instance update the two instance indexes.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.runner.store.timer_records import RECORDS_POSTGRESQL, RECORDS_SQLITE

MIGRATIONS_TABLE = "statekit_schema_migrations"


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its number, a one-line description and the SQL per dialect."""

    version: int
    description: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def statements(self, dialect: str) -> tuple[str, ...]:
        """The SQL statements of this migration for `dialect` (sqlite or postgresql)."""
        return self.sqlite if dialect == "sqlite" else self.postgresql


def _tables() -> tuple[str, ...]:
    """Version 1 in both dialects, with `{serial}` (an auto-increment key), `{real}` (a
    float) and `{payload}` (a JSON text) to fill in."""
    return (
        """CREATE TABLE statekit_charts (
            digest TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            source TEXT,
            registered_at {real} NOT NULL
        )""",
        """CREATE TABLE statekit_instances (
            instance_id TEXT PRIMARY KEY,
            chart_name TEXT NOT NULL,
            chart_version INTEGER NOT NULL,
            chart_digest TEXT NOT NULL,
            version BIGINT NOT NULL CHECK (version >= 0),
            configuration TEXT NOT NULL,
            context TEXT NOT NULL,
            history TEXT NOT NULL,
            initial_context TEXT NOT NULL,
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL
        )""",
        """CREATE TABLE statekit_events (
            instance_id TEXT NOT NULL,
            sequence BIGINT NOT NULL CHECK (sequence >= 1),
            event_id TEXT NOT NULL,
            type TEXT NOT NULL,
            payload {payload} NOT NULL,
            payload_sha256 TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('APPLIED', 'ALREADY_APPLIED')),
            chart_version INTEGER NOT NULL,
            evidence TEXT NOT NULL,
            recorded_at {real} NOT NULL,
            PRIMARY KEY (instance_id, sequence),
            UNIQUE (instance_id, event_id)
        )""",
        """CREATE TABLE statekit_rejections (
            id {serial},
            instance_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            type TEXT NOT NULL,
            payload {payload} NOT NULL,
            payload_sha256 TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT NOT NULL,
            message TEXT,
            version BIGINT NOT NULL,
            detail TEXT NOT NULL,
            recorded_at {real} NOT NULL
        )""",
        "CREATE INDEX statekit_rejections_instance ON statekit_rejections (instance_id, id)",
        """CREATE TABLE statekit_outbox (
            id {serial},
            instance_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sequence BIGINT NOT NULL,
            type TEXT NOT NULL,
            payload {payload} NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'delivered', 'dead')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at {real} NOT NULL DEFAULT 0,
            claimed_by TEXT,
            claimed_until {real},
            last_error TEXT,
            created_at {real} NOT NULL,
            delivered_at {real},
            UNIQUE (instance_id, message_id)
        )""",
        "CREATE INDEX statekit_outbox_pending ON statekit_outbox (instance_id, id) "
        "WHERE status = 'pending'",
        "CREATE INDEX statekit_outbox_status ON statekit_outbox (status, id)",
        """CREATE TABLE statekit_snapshots (
            instance_id TEXT NOT NULL,
            through_sequence BIGINT NOT NULL,
            state TEXT NOT NULL,
            state_sha256 TEXT NOT NULL,
            chart_digest TEXT NOT NULL,
            chart_version INTEGER NOT NULL,
            engine_version TEXT NOT NULL,
            created_at {real} NOT NULL,
            PRIMARY KEY (instance_id, through_sequence)
        )""",
        """CREATE TABLE statekit_inbox (
            consumer TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            processed_at {real} NOT NULL,
            PRIMARY KEY (consumer, instance_id, message_id)
        )""",
    )


def _format(statements: tuple[str, ...], **names: str) -> tuple[str, ...]:
    return tuple(s.format(**names) for s in statements)


_IDEMPOTENCY = (
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
_TIME_SQLITE = (
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
    _IDEMPOTENCY[1],
)
_TIME_POSTGRESQL = (
    *_TIME_COMMON,
    "ALTER TABLE statekit_events ADD COLUMN clock_ms BIGINT",
    "ALTER TABLE statekit_events DROP CONSTRAINT statekit_events_status_check",
    f"ALTER TABLE statekit_events ADD CONSTRAINT statekit_events_status_check CHECK ({_STATUS_V4})",
)

# The payload hash of an event is internal (the history API gives it as hex): 32 bytes
# instead of 64 hex characters. A text that is not a hash (a tampered row) is kept as its
# bytes (PostgreSQL) or as it is (SQLite), so that `verify` still reports it.
_BINARY_HASH_SQLITE = (
    "UPDATE statekit_events SET payload_sha256 = statekit_unhex(payload_sha256) "
    "WHERE typeof(payload_sha256) = 'text'",
)
_BINARY_HASH_POSTGRESQL = (
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
_COMPACT_SQLITE = (
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
    _IDEMPOTENCY[1],
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
_COMPACT_POSTGRESQL = (
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

_RETENTION = (
    """CREATE TABLE statekit_retention (
        instance_id TEXT PRIMARY KEY,
        events_through BIGINT NOT NULL DEFAULT 0 CHECK (events_through >= 0),
        outbox_through BIGINT NOT NULL DEFAULT 0 CHECK (outbox_through >= 0),
        pruned_at {real} NOT NULL
    )""",
)
SHARD_TABLE = "statekit_shard"


def _shard_table(real: str) -> tuple[str, ...]:
    """Version 8: the one row saying which shard of which set this database is."""
    return (
        f"""CREATE TABLE {SHARD_TABLE} (
            singleton BIGINT PRIMARY KEY CHECK (singleton = 1),
            layout_id TEXT NOT NULL,
            shard_index BIGINT NOT NULL CHECK (shard_index >= 0),
            shard_count BIGINT NOT NULL CHECK (shard_count > shard_index),
            recorded_at {real} NOT NULL
        )""",
    )


INSPECTOR_INDEXES = (
    "CREATE INDEX statekit_instances_activity ON statekit_instances (updated_at, instance_id)",
    "CREATE INDEX statekit_instances_state ON statekit_instances "
    "(chart_name, chart_version, configuration)",
    "CREATE INDEX statekit_events_event_id ON statekit_events (event_id)",
    "CREATE INDEX statekit_events_key ON statekit_events (idempotency_key) "
    "WHERE idempotency_key IS NOT NULL",
    "CREATE INDEX statekit_rejections_event_id ON statekit_rejections (event_id)",
)
"""Migration 10 (the same in both dialects)."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "instances, events, rejections, outbox, snapshots, inbox, charts",
        _format(
            _tables(),
            serial="INTEGER PRIMARY KEY AUTOINCREMENT",
            real="REAL",
            payload="TEXT",
        ),
        _format(
            _tables(),
            serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
            real="DOUBLE PRECISION",
            payload="TEXT",
        ),
    ),
    Migration(
        2,
        "every stored integer is 64-bit (chart versions, outbox attempts)",
        (),  # a SQLite INTEGER is already signed 64-bit
        tuple(
            f"ALTER TABLE {table} ALTER COLUMN {column} TYPE BIGINT"
            for table, column in (
                ("statekit_charts", "version"),
                ("statekit_instances", "chart_version"),
                ("statekit_events", "chart_version"),
                ("statekit_outbox", "attempts"),
                ("statekit_snapshots", "chart_version"),
                (MIGRATIONS_TABLE, "version"),
            )
        ),
    ),
    Migration(
        3,
        "business idempotency keys: (instance, event type, key) unique among accepted events",
        _IDEMPOTENCY,
        _IDEMPOTENCY,
    ),
    Migration(
        4,
        "durable timers: the timers table, each event's clock reading, consumed timer deliveries",
        _TIME_SQLITE,
        _TIME_POSTGRESQL,
    ),
    Migration(
        5,
        "events: the payload hash as 32 bytes; new evidence in the compact form",
        _BINARY_HASH_SQLITE,
        _BINARY_HASH_POSTGRESQL,
    ),
    Migration(
        6,
        "compact rows: events keyed without a rowid, hash checks and packed evidence; "
        "outbox times from their events, dead messages indexed; a raising version check",
        _COMPACT_SQLITE,
        _COMPACT_POSTGRESQL,
    ),
    Migration(
        7,
        "retention: how far each instance's events were thinned and delivered messages removed",
        _format(_RETENTION, real="REAL"),
        _format(_RETENTION, real="DOUBLE PRECISION"),
    ),
    Migration(
        8,
        "shard layout: which shard of which set this database is (one row, or none)",
        _shard_table("REAL"),
        _shard_table("DOUBLE PRECISION"),
    ),
    Migration(
        9,
        "timer rows hold their timers: an event writes the timers it armed or cancelled only",
        RECORDS_SQLITE,
        RECORDS_POSTGRESQL,
    ),
    Migration(
        10,
        "inspector indexes: instances by last activity and by state, events and rejections "
        "by event ID, events by idempotency key",
        INSPECTOR_INDEXES,
        INSPECTOR_INDEXES,
    ),
)
"""Every migration, in order; append new ones, never edit a released one."""


LATEST = MIGRATIONS[-1].version
"""The schema version this statekit writes."""


def create_migrations_table(dialect: str) -> str:
    """The statement creating the migrations table when it is missing."""
    real = "REAL" if dialect == "sqlite" else "DOUBLE PRECISION"
    return (
        f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} ("
        "version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
        f"applied_at {real} NOT NULL)"
    )

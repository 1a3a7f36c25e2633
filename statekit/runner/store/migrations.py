"""The runner's schema, as numbered migrations per dialect.

`statekit_schema_migrations` records which migrations a database has; opening
a store applies the missing ones in order, in one transaction, under the
store's write lock (SQLite `BEGIN IMMEDIATE`, a PostgreSQL advisory lock), so
that a later schema change upgrades an existing database in place and two
processes opening a new database at once do not race. A database whose
schema is newer than this statekit is refused (`SchemaVersionError`).

Version 1 is the runner's tables (`store.migrations_v1` lists them); the SQL of
versions 3 to 6 is in `store.migrations_v3_v6`; the runner of migrations is
`store.schema_queries`.

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
query costs): the instances by last activity (`updated_at`, then every column the list
sorts or filters by, so that it reads the index rather than the rows) and by chart,
chart version and configuration (the counts per state read that index alone), the
events by event ID and by idempotency key, the rejections by event ID. Writers pay for
them: an event's insert updates one or two more index entries and its instance update
the two instance indexes.

Version 11 is families (`statekit.runner.store.migrations_v11`, which lists the columns):
the links between an invoked child instance and its parent and root, and the inbox of
messages sent to an instance outside the sender's family, delivered each in a transaction
of its own on the receiver.

Version 12 keeps one index per lookup of an event row (`store.migrations_v12`): the
event ID's uniqueness as `(event_id, instance_id)` and the business key's as
`(idempotency_key, instance_id, type)` also serve the inspector's lookups by event ID
and by key, whose own indexes (version 10) go: an event inserts one index entry less
(two with a business key). SQLite rebuilds its events table with the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.runner.store.migrations_v1 import format_statements, initial_tables
from statekit.runner.store.migrations_v3_v6 import (
    BINARY_HASH_POSTGRESQL,
    BINARY_HASH_SQLITE,
    COMPACT_POSTGRESQL,
    COMPACT_SQLITE,
    IDEMPOTENCY,
    TIME_POSTGRESQL,
    TIME_SQLITE,
)
from statekit.runner.store.migrations_v11 import FAMILIES_POSTGRESQL, FAMILIES_SQLITE
from statekit.runner.store.migrations_v12 import ONE_INDEX_POSTGRESQL, ONE_INDEX_SQLITE
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
    # the list's columns after its default order: any sort or filter on them reads the
    # index alone, not the instance rows (their context and history can be kilobytes)
    "CREATE INDEX statekit_instances_activity ON statekit_instances "
    "(updated_at, instance_id, chart_name, chart_version, configuration, version)",
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
        format_statements(
            initial_tables(),
            serial="INTEGER PRIMARY KEY AUTOINCREMENT",
            real="REAL",
            payload="TEXT",
        ),
        format_statements(
            initial_tables(),
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
        IDEMPOTENCY,
        IDEMPOTENCY,
    ),
    Migration(
        4,
        "durable timers: the timers table, each event's clock reading, consumed timer deliveries",
        TIME_SQLITE,
        TIME_POSTGRESQL,
    ),
    Migration(
        5,
        "events: the payload hash as 32 bytes; new evidence in the compact form",
        BINARY_HASH_SQLITE,
        BINARY_HASH_POSTGRESQL,
    ),
    Migration(
        6,
        "compact rows: events keyed without a rowid, hash checks and packed evidence; "
        "outbox times from their events, dead messages indexed; a raising version check",
        COMPACT_SQLITE,
        COMPACT_POSTGRESQL,
    ),
    Migration(
        7,
        "retention: how far each instance's events were thinned and delivered messages removed",
        format_statements(_RETENTION, real="REAL"),
        format_statements(_RETENTION, real="DOUBLE PRECISION"),
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
    Migration(
        11,
        "families: links between invoked children and their parents, and the inbox of "
        "messages between instances",
        FAMILIES_SQLITE,
        FAMILIES_POSTGRESQL,
    ),
    Migration(
        12,
        "one index per lookup of an event: the event ID's and the business key's uniqueness "
        "serve the lookups by event ID and by key",
        ONE_INDEX_SQLITE,
        ONE_INDEX_POSTGRESQL,
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

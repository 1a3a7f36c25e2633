"""Schema version 1 (moved here from `store.migrations`, which lists every version):
the runner's tables in both dialects.

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
"""

from __future__ import annotations


def initial_tables() -> tuple[str, ...]:
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


def format_statements(statements: tuple[str, ...], **names: str) -> tuple[str, ...]:
    """`statements` with their `{name}` placeholders filled in."""
    return tuple(s.format(**names) for s in statements)

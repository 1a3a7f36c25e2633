"""Schema version 11 (listed in `store.migrations`): families and messages between
instances, the same in both dialects but for the serial key and the float type.

- `statekit_family_links`: one row per invoked child instance: its parent, the invoke
  id it was started under, the family's root instance (an event sent from outside to a
  child is routed through this row to the root, which its family step locks first), the
  parent's sequence whose step started it (0: the parent's creation), its status
  (`active`, then `done` when it reached a final state or `cancelled` when its invoking
  state was left) and when it was created and ended. Indexed by parent (a parent's
  children) and by root (a family's members).
- `statekit_instance_inbox`: the messages one instance sent to an instance outside its
  family (`send: {to: {chart, instance}}`), written in the sender's transaction and
  delivered later, each in a transaction of its own on the receiver
  (`Runner.deliver_messages`): the receiver's chart name and instance, the sender's
  instance, the version its step produced and the message's index in that step, the
  event and its payload, the event ID it is applied under (derived from the sender, its
  version and the index; unique per receiver: a second delivery is ALREADY_APPLIED), its
  state
  (`pending`, `delivered`), the event the classification is replied as (`reply`, NULL:
  nobody is told), and once delivered the receiving step's status and reason. Pending
  rows are indexed by sender, in order, for the delivery's head-of-each-sender query.
"""

from __future__ import annotations

from statekit.runner.store.migrations_v1 import format_statements

FAMILY_LINKS = "statekit_family_links"
INSTANCE_INBOX = "statekit_instance_inbox"

_TABLES = (
    f"""CREATE TABLE {FAMILY_LINKS} (
        child_instance_id TEXT PRIMARY KEY,
        parent_instance_id TEXT NOT NULL,
        invoke_id TEXT NOT NULL,
        root_instance_id TEXT NOT NULL,
        started_sequence BIGINT NOT NULL CHECK (started_sequence >= 0),
        status TEXT NOT NULL DEFAULT 'active'
            CHECK (status IN ('active', 'done', 'cancelled')),
        created_at {{real}} NOT NULL,
        ended_at {{real}}
    )""",
    f"CREATE INDEX statekit_family_links_parent ON {FAMILY_LINKS} (parent_instance_id)",
    f"CREATE INDEX statekit_family_links_root ON {FAMILY_LINKS} (root_instance_id)",
    f"""CREATE TABLE {INSTANCE_INBOX} (
        id {{serial}},
        target_chart TEXT NOT NULL,
        target_instance_id TEXT NOT NULL,
        sender_instance_id TEXT NOT NULL,
        sender_version BIGINT NOT NULL CHECK (sender_version >= 0),
        message_index BIGINT NOT NULL CHECK (message_index >= 0),
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        event_id TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered')),
        reply_event TEXT,
        outcome_status TEXT,
        outcome_reason TEXT,
        created_at {{real}} NOT NULL,
        delivered_at {{real}},
        UNIQUE (target_instance_id, event_id)
    )""",
    f"CREATE INDEX statekit_instance_inbox_pending ON {INSTANCE_INBOX} "
    "(sender_instance_id, id) WHERE state = 'pending'",
    f"CREATE INDEX statekit_instance_inbox_target ON {INSTANCE_INBOX} (target_instance_id)",
)

FAMILIES_SQLITE = format_statements(
    _TABLES, serial="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL"
)
FAMILIES_POSTGRESQL = format_statements(
    _TABLES, serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", real="DOUBLE PRECISION"
)

"""`verify` never says "ok" about a store that differs: a table over every stored column.

A store on each dialect gets a history that fills every table (applied,
already-applied and rejected events, both kinds of history conflict,
snapshots, delivered and pending messages, an inbox row). Then, one column at
a time, a row is changed inside a transaction that is rolled back afterwards,
and `verify` plus `verify_store` (what `statekit verify` runs) must report a
difference. A column that cannot be checked says why, in the table itself.
The table must name every column the database has, so a new column cannot
go unchecked silently.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from runner_charts import COUNTER, chart_from

from statekit.engine.chart import Chart
from statekit.runner.chart_versions import chart_sets
from statekit.runner.command_checks import make_command
from statekit.runner.errors import RunnerError
from statekit.runner.outbox import Dispatcher, Inbox, OutboxMessage
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import LATEST
from statekit.runner.store_checks import verify_store
from statekit.runner.verify import verify


def chart_source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


ZEROS = "sha256:" + "0" * 64
TIME = "a wall-clock time: nothing derives it from the history"
LEASE = "a dispatcher's lease: it only delays or repeats a delivery (at least once anyway)"

# (table, column) → (SET expression, WHERE clause) to tamper, or a str: why it cannot be
# checked. Rows: instance c; event #1 (e1, emitted e1/0, delivered); the rejection of
# e3 (NOT_POSITIVE); the conflicts of e1 (another payload) and e4 (an old sequence);
# message e5/0 (pending after a failed attempt); the snapshot at 2.
REJECTED_ROW = "event_id = 'e3'"
TAMPER: dict[tuple[str, str], tuple[str, str] | str] = {
    ("statekit_charts", "digest"): (f"'{ZEROS}'", "1 = 1"),
    ("statekit_charts", "name"): ("'other'", "1 = 1"),
    ("statekit_charts", "version"): ("7", "1 = 1"),
    ("statekit_charts", "source"): ("REPLACE(source, 'Ping: {}', 'Ping: {}\n  Pong: {}')", "1 = 1"),
    ("statekit_charts", "registered_at"): TIME,
    ("statekit_instances", "instance_id"): ("'c2'", "instance_id = 'c'"),
    ("statekit_instances", "chart_name"): ("'other'", "instance_id = 'c'"),
    ("statekit_instances", "chart_version"): ("2", "instance_id = 'c'"),
    ("statekit_instances", "chart_digest"): (f"'{ZEROS}'", "instance_id = 'c'"),
    ("statekit_instances", "version"): ("5", "instance_id = 'c'"),
    ("statekit_instances", "configuration"): ("'[]'", "instance_id = 'c'"),
    ("statekit_instances", "context"): (
        "REPLACE(context, '\"total\":6', '\"total\":7')", "instance_id = 'c'"
    ),
    ("statekit_instances", "history"): ("'{\"open\":[\"open\"]}'", "instance_id = 'c'"),
    ("statekit_instances", "initial_context"): ("'{\"total\":100}'", "instance_id = 'c'"),
    ("statekit_instances", "created_at"): TIME,
    ("statekit_instances", "updated_at"): TIME,
    ("statekit_events", "instance_id"): ("'zz'", "sequence = 1"),
    ("statekit_events", "sequence"): ("9", "sequence = 1"),
    ("statekit_events", "event_id"): ("'e1x'", "sequence = 1"),  # its message's ID derives from it
    ("statekit_events", "type"): ("'Ping'", "sequence = 1"),
    ("statekit_events", "payload"): ("'{\"by\":3}'", "sequence = 1"),
    ("statekit_events", "payload_sha256"): (f"'{'0' * 64}'", "sequence = 1"),
    ("statekit_events", "status"): ("'ALREADY_APPLIED'", "sequence = 1"),
    ("statekit_events", "chart_version"): ("2", "sequence = 1"),
    ("statekit_events", "evidence"): ("'{\"microsteps\":[]}'", "sequence = 1"),
    ("statekit_events", "recorded_at"): TIME,
    ("statekit_events", "idempotency_key"): ("'[2]'", "sequence = 1"),  # Incr declares no key
    ("statekit_rejections", "id"): "the audit's own key: audited attempts are independent",
    ("statekit_rejections", "instance_id"): ("'zz'", REJECTED_ROW),
    ("statekit_rejections", "event_id"): ("'e1x'", "reason = 'EVENT_ID_PAYLOAD_CONFLICT'"),
    ("statekit_rejections", "type"): ("'Ping'", REJECTED_ROW),
    ("statekit_rejections", "payload"): ("'{\"by\":3}'", REJECTED_ROW),
    ("statekit_rejections", "payload_sha256"): (f"'{'0' * 64}'", REJECTED_ROW),
    ("statekit_rejections", "status"): ("'CONFLICT'", REJECTED_ROW),
    ("statekit_rejections", "reason"): ("'OTHER'", REJECTED_ROW),
    ("statekit_rejections", "message"): ("'something else'", REJECTED_ROW),
    # a guard's rejection may be the same at every version; a conflict names its version
    ("statekit_rejections", "version"): ("0", "reason = 'DUPLICATE_OR_OLD_SEQUENCE'"),
    ("statekit_rejections", "detail"): ("'{\"x\":1}'", REJECTED_ROW),
    ("statekit_rejections", "recorded_at"): TIME,
    ("statekit_outbox", "id"): ("1000", "message_id = 'e1/0'"),  # its order is checked
    ("statekit_outbox", "instance_id"): ("'zz'", "message_id = 'e1/0'"),
    ("statekit_outbox", "message_id"): ("'x/0'", "message_id = 'e1/0'"),
    ("statekit_outbox", "sequence"): ("2", "message_id = 'e1/0'"),
    ("statekit_outbox", "type"): ("'Other'", "message_id = 'e1/0'"),
    ("statekit_outbox", "payload"): ("'{}'", "message_id = 'e1/0'"),
    ("statekit_outbox", "status"): ("'pending'", "message_id = 'e1/0'"),
    ("statekit_outbox", "attempts"): ("0", "message_id = 'e1/0'"),
    ("statekit_outbox", "next_attempt_at"): "when to retry: a schedule, not from the history",
    ("statekit_outbox", "claimed_by"): LEASE,
    ("statekit_outbox", "claimed_until"): LEASE,
    ("statekit_outbox", "last_error"): ("NULL", "message_id = 'e5/0'"),
    ("statekit_outbox", "created_at"): TIME,
    ("statekit_outbox", "delivered_at"): ("NULL", "message_id = 'e1/0'"),
    ("statekit_snapshots", "instance_id"): ("'zz'", "through_sequence = 2"),
    ("statekit_snapshots", "through_sequence"): ("3", "through_sequence = 2"),
    ("statekit_snapshots", "state"): ("REPLACE(state, '2', '3')", "through_sequence = 2"),
    ("statekit_snapshots", "state_sha256"): (f"'{'0' * 64}'", "through_sequence = 2"),
    ("statekit_snapshots", "chart_digest"): (f"'{ZEROS}'", "through_sequence = 2"),
    ("statekit_snapshots", "chart_version"): ("2", "through_sequence = 2"),
    ("statekit_snapshots", "engine_version"): ("'statekit-0.0/state-0'", "through_sequence = 2"),
    ("statekit_snapshots", "created_at"): TIME,
    ("statekit_inbox", "consumer"): "the consumer's own name: nothing else records it",
    ("statekit_inbox", "instance_id"): ("'zz'", "1 = 1"),
    ("statekit_inbox", "message_id"): ("'x/0'", "1 = 1"),
    ("statekit_inbox", "processed_at"): TIME,
    ("statekit_schema_migrations", "version"): (f"{LATEST + 1}", f"version = {LATEST}"),
    ("statekit_schema_migrations", "description"): ("'other'", "version = 1"),
    ("statekit_schema_migrations", "applied_at"): TIME,
}  # fmt: skip
# The columns of time: this chart arms no timer, so they hold nothing to tamper with;
# test_timer_tamper.py tampers with each of them in a store of a chart that does.
TIMED = "time: tampered in test_timer_tamper.py, with a chart that arms timers"
# The retention watermarks: nothing was pruned in this store, so they hold no row;
# test_retention_tamper.py moves them in a pruned store.
PRUNED = "retention: tampered in test_retention_tamper.py, in a pruned store"
# Families and messages between instances: this chart invokes no chart and sends nothing
# to another instance, so those tables hold no row here.
ALONE = "families: this chart invokes nothing and sends to no other instance (no rows)"
TAMPER.update(
    {
        **{
            ("statekit_family_links", c): ALONE
            for c in (
                "child_instance_id",
                "parent_instance_id",
                "invoke_id",
                "root_instance_id",
                "started_sequence",
                "status",
                "created_at",
                "ended_at",
            )
        },
        **{
            ("statekit_instance_inbox", c): ALONE
            for c in (
                "id",
                "target_chart",
                "target_instance_id",
                "sender_instance_id",
                "sender_version",
                "message_index",
                "event",
                "payload",
                "event_id",
                "state",
                "reply_event",
                "outcome_status",
                "outcome_reason",
                "created_at",
                "delivered_at",
            )
        },
    }
)
TAMPER.update(
    {
        ("statekit_retention", "instance_id"): PRUNED,
        ("statekit_retention", "events_through"): PRUNED,
        ("statekit_retention", "outbox_through"): PRUNED,
        ("statekit_retention", "pruned_at"): TIME,
    }
)
TAMPER.update(
    {
        ("statekit_instances", "timers"): TIMED,
        ("statekit_instances", "start_clock_ms"): TIMED,
        ("statekit_events", "clock_ms"): TIMED,
        **{
            ("statekit_timers", column): TIMED
            for column in (
                "instance_id",
                "timer_id",
                "generation",
                "event",
                "payload",
                "due_ms",
                "sequence",
                "record",
            )
        },
    }
)
# The shard layout row: a store used on its own has none. Opening a shard set checks its
# identity, index and count (tests/runner/test_sharding.py changes each and sees the
# opening refused); `singleton` keeps it one row, `recorded_at` says when.
SHARDED = "the shard layout: checked when a shard set opens (tests/runner/test_sharding.py)"
TAMPER.update(
    {
        ("statekit_shard", column): SHARDED
        for column in ("singleton", "layout_id", "shard_index", "shard_count", "recorded_at")
    }
)
# PostgreSQL refuses to change an identity column; SQLite lets the row key be changed.
SQLITE_ONLY = {("statekit_outbox", "id")}


def filled_store(url: str) -> tuple[Store, Any]:
    chart = chart_from(COUNTER)
    chart = Chart(chart.ir, source=chart_source(COUNTER))  # the store keeps the source
    runner = Runner(chart, open_store(url), snapshot_every=2)
    runner.create("c")
    runner.create("quiet")
    assert runner.apply("c", "e1", "Incr", {"by": 2}).applied  # v1, emits e1/0
    assert runner.apply("c", "e2", "Ping", {}).version == 2  # ALREADY_APPLIED, snapshot at 2
    assert runner.apply("c", "e3", "Incr", {"by": 0}).reason == "NOT_POSITIVE"
    assert runner.apply("c", "e1", "Incr", {"by": 5}).reason == "EVENT_ID_PAYLOAD_CONFLICT"
    old = runner.apply_batch("c", [make_command("e4", "Incr", {"by": 1}, sequence=1)])
    assert old[0].reason == "DUPLICATE_OR_OLD_SEQUENCE"
    assert runner.apply("c", "e5", "Incr", {"by": 3}, expected_version=2).version == 3
    assert runner.apply("c", "e6", "Incr", {"by": 1}).version == 4  # snapshot at 4

    def handle(message: OutboxMessage) -> None:
        if message.message_id != "e1/0":
            raise RuntimeError("the consumer is down")

    dispatcher = Dispatcher(runner.store, {"Counted": handle}, max_attempts=3)
    assert dispatcher.dispatch_once().delivered == 1  # e1/0
    assert dispatcher.dispatch_once().failed == 1  # e5/0 failed once, e6/0 waits behind it
    first = OutboxMessage(
        instance_id="c", message_id="e1/0", sequence=1, type="Counted", payload={}, attempt=1
    )
    assert Inbox(runner.store, "billing").process(first, lambda connection: None)
    return runner.store, chart


def findings(store: Store, chart: Any) -> list[str]:
    """What `statekit verify --chart` reports, as a list (empty: ok)."""
    found = list(verify_store(store, [chart]))
    sets = chart_sets(store, [chart])
    for instance in store.instance_charts():
        chart_set = sets.get(instance.chart_name)
        if chart_set is None:
            found.append(f"{instance.instance_id}: chart {instance.chart_name!r} not available")
            continue
        try:
            report = verify(store, chart_set, instance.instance_id)
        except RunnerError as exc:
            found.append(f"{instance.instance_id}: {exc}")
            continue
        found.extend(f"{instance.instance_id}: {d}" for d in report.differences)
        found.extend(f"{instance.instance_id}: {p}" for p in report.snapshot_problems)
    return found


class _Undo(Exception):
    pass


def tampered(
    store: Store, chart: Any, table: str, column: str, change: tuple[str, str]
) -> list[str]:
    """The findings with one column changed, inside a transaction rolled back after."""
    expression, where = change
    found: list[str] = []
    try:
        with store.write():
            cursor = store.execute(f"UPDATE {table} SET {column} = {expression} WHERE {where}")
            assert cursor.rowcount >= 1, (table, column)
            found = findings(store, chart)
            raise _Undo
    except _Undo:
        pass
    return found


def columns(store: Store) -> Iterator[tuple[str, str]]:
    if store.dialect == "sqlite":
        tables = store.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'statekit%'"
        ).fetchall()
        for (table,) in tables:
            for row in store.execute(f"PRAGMA table_info({table})").fetchall():
                yield table, row[1]
        return
    rows = store.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND left(table_name, 9) = 'statekit_'"
    ).fetchall()
    yield from ((r[0], r[1]) for r in rows)


def test_every_tampered_column_is_reported(store_url: str) -> None:
    store, chart = filled_store(store_url)
    assert findings(store, chart) == []
    assert set(columns(store)) == set(TAMPER), "the table must name every stored column"
    missed = []
    for (table, column), change in TAMPER.items():
        if isinstance(change, str):
            continue  # the reason is in the table
        if store.dialect != "sqlite" and (table, column) in SQLITE_ONLY:
            continue
        if not tampered(store, chart, table, column, change):
            missed.append(f"{table}.{column}")
    assert missed == [], f"verify said ok about a changed column: {missed}"
    assert findings(store, chart) == []  # every change was rolled back


@pytest.mark.parametrize("change", ["'{\"total\":2}'", "'{}'"])
def test_verify_never_prefers_a_side(store_url: str, change: str) -> None:
    # the stored row is left as it is; only the report says which side has what
    store, chart = filled_store(store_url)
    with store.write():
        store.execute(
            f"UPDATE statekit_instances SET initial_context = {change} WHERE instance_id = 'quiet'"
        )
    before = store.execute("SELECT * FROM statekit_instances ORDER BY instance_id").fetchall()
    found = findings(store, chart)
    assert found if change != "'{}'" else found == []
    assert (
        store.execute("SELECT * FROM statekit_instances ORDER BY instance_id").fetchall() == before
    )

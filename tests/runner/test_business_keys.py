"""Business idempotency keys in the runner: one accepted event per fact, on SQLite and
PostgreSQL (the chart `runner_charts.FACTS` keys TaskStarted by attempt, PAY_SUCCESS by
channel_ref, Heartbeat by attempt)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from runner_charts import COUNTER, FACTS, chart_from, write_chart
from store_legacy import before_schema_5

from statekit.runner.command_checks import make_command
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import LATEST
from statekit.runner.store.rows import EventRow

APPLIED, ALREADY = OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED
REJECTED, CONFLICT = OutcomeStatus.REJECTED, OutcomeStatus.CONFLICT
START = {"attempt": 1, "worker": "w-1"}


@pytest.fixture
def runner(store_url: str) -> Runner:
    r = Runner(chart_from(FACTS), open_store(store_url))
    r.create("t")
    return r


def stored(r: Runner) -> tuple[Any, ...]:
    """Everything an apply may write but the audit: history, instance, outbox."""
    loaded = r.load("t")
    return (
        [(e.sequence, e.event_id, e.payload) for e in r.history("t")],
        (loaded.version, loaded.state),
        [(m.message_id, m.payload) for m in r.store.outbox(["pending"])],
    )


def test_the_same_fact_under_a_new_event_id_is_an_audited_duplicate(runner: Runner) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START).applied
    before = stored(r)
    o = r.apply("t", "e2", "TaskStarted", {"worker": "w-1", "attempt": 1})
    assert (o.status, o.reason, o.duplicate, o.sequence, o.version) == (ALREADY, None, True, 1, 1)
    assert o.first_event_id == "e1" and o.event_id == "e2" and o.result is None
    data = o.to_data("t")
    assert (data["duplicate"], data["first_event_id"], data["sequence"]) == (True, "e1", 1)
    assert stored(r) == before  # nothing written but the audit
    [audit] = r.rejections("t")
    assert (audit["event_id"], audit["status"], audit["reason"]) == (
        "e2",
        "ALREADY_APPLIED",
        "DUPLICATE_FACT",
    )
    assert (audit["detail"]["event_id"], audit["detail"]["sequence"]) == ("e1", 1)
    assert r.verify("t").ok


def test_the_same_key_with_another_payload_is_an_audited_conflict(runner: Runner) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START).applied
    before = stored(r)
    o = r.apply("t", "e2", "TaskStarted", {"attempt": 1, "worker": "w-2"})
    assert (o.status, o.reason, o.version, o.first_event_id) == (
        CONFLICT,
        "BUSINESS_KEY_CONFLICT",
        1,
        "e1",
    )
    assert o.conflict is not None
    assert (o.conflict.event_id, o.conflict.sequence) == ("e1", 1)
    assert "another payload" in (o.message or "")
    assert stored(r) == before
    [audit] = r.rejections("t")
    assert (audit["status"], audit["reason"], audit["payload"]["worker"]) == (
        "CONFLICT",
        "BUSINESS_KEY_CONFLICT",
        "w-2",
    )
    assert r.verify("t").ok


def test_a_payment_re_sent_under_a_fresh_message_id_is_counted_once(runner: Runner) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START).applied
    pay = {"channel_ref": "ch-9", "amount": 40}
    assert r.apply("t", "m-1", "PAY_SUCCESS", pay).applied
    for n in range(2, 5):
        o = r.apply("t", f"m-{n}", "PAY_SUCCESS", pay)
        assert (o.status, o.duplicate, o.sequence, o.first_event_id) == (ALREADY, True, 2, "m-1")
    assert r.apply("t", "m-5", "PAY_SUCCESS", {"channel_ref": "ch-10", "amount": 40}).applied
    assert r.load("t").state.context["paid"] == 80
    assert r.verify("t").ok


def test_the_event_id_duplicate_comes_first(runner: Runner) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START).applied
    o = r.apply("t", "e1", "TaskStarted", START)
    assert (o.status, o.duplicate, o.first_event_id) == (ALREADY, True, None)
    o = r.apply("t", "e1", "TaskStarted", {"attempt": 1, "worker": "w-2"})
    assert o.reason == "EVENT_ID_PAYLOAD_CONFLICT"
    assert [a["reason"] for a in r.rejections("t")] == ["EVENT_ID_PAYLOAD_CONFLICT"]


def test_a_fact_is_recognised_before_a_stale_version_or_a_taken_sequence(
    runner: Runner,
) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START, expected_version=0, sequence=1).applied
    o = r.apply("t", "e2", "TaskStarted", START, expected_version=0)
    assert (o.status, o.duplicate, o.first_event_id) == (ALREADY, True, "e1")
    o = r.apply("t", "e3", "TaskStarted", START, sequence=1)
    assert (o.status, o.duplicate, o.first_event_id) == (ALREADY, True, "e1")
    assert r.verify("t").ok


def test_only_accepted_events_claim_a_key(runner: Runner) -> None:
    r = runner
    pay = {"channel_ref": "ch-1", "amount": 5}
    rejected = r.apply("t", "m-1", "PAY_SUCCESS", pay)  # not running yet: undefined here
    assert rejected.status is REJECTED
    assert r.apply("t", "e1", "TaskStarted", START).applied
    o = r.apply("t", "m-2", "PAY_SUCCESS", pay)
    assert o.applied and o.first_event_id is None
    # a rejection by the chart (another attempt while running) claims nothing either
    assert r.apply("t", "e2", "TaskStarted", {"attempt": 2, "worker": "w"}).reason == (
        "ALREADY_RUNNING"
    )
    # an `already` classification is accepted, so it claims its key
    assert r.apply("t", "h1", "Heartbeat", {"attempt": 1}).status is ALREADY
    o = r.apply("t", "h2", "Heartbeat", {"attempt": 1})
    assert (o.status, o.duplicate, o.sequence, o.first_event_id) == (ALREADY, True, 3, "h1")
    assert [e.event_id for e in r.history("t")] == ["e1", "m-2", "h1"]
    assert r.verify("t").ok


def test_a_batch_recognises_a_fact_it_recorded_itself(runner: Runner) -> None:
    r = runner
    outcomes = r.apply_batch(
        "t",
        [
            make_command("e1", "TaskStarted", START),
            make_command("e2", "TaskStarted", START),
            make_command("e3", "TaskStarted", {"attempt": 1, "worker": "other"}),
        ],
    )
    assert [(o.status, o.first_event_id) for o in outcomes] == [
        (APPLIED, None),
        (ALREADY, "e1"),
        (CONFLICT, "e1"),
    ]
    assert outcomes[2].reason == "BUSINESS_KEY_CONFLICT"
    assert [e.event_id for e in r.history("t")] == ["e1"]
    assert r.verify("t").ok


# Payloads whose key cannot be read: the engine rejects them, and they claim nothing.
UNREADABLE = [
    {},
    {"worker": "w-1"},
    {"attempt": None, "worker": "w-1"},
    {"attempt": "1", "worker": "w-1"},
    {"attempt": 1.0, "worker": "w-1"},
    {"attempt": True, "worker": "w-1"},
    {"attempt": [1], "worker": "w-1"},
    {"attempt": {"n": 1}, "worker": "w-1"},
    {"attempt": 2**70, "worker": "w-1"},
]


@pytest.mark.parametrize("payload", UNREADABLE, ids=repr)
def test_a_payload_without_a_readable_key_is_rejected_and_claims_nothing(
    runner: Runner, payload: dict[str, Any]
) -> None:
    r = runner
    o = r.apply("t", "bad", "TaskStarted", payload)
    assert (o.status, o.reason) == (REJECTED, "INVALID_PAYLOAD")
    assert r.history("t") == []
    assert r.apply("t", "good", "TaskStarted", START).applied
    assert r.verify("t").ok


# Key values that must stay distinct facts: they differ only in ways an encoding could lose.
DISTINCT = ["a", "A", "a ", " a", "a\u0301", "\u00e1", '"a"', '["a"]', "a,b", "", "\u2028", "0"]


def test_distinct_key_values_are_distinct_facts(runner: Runner) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START).applied
    for n, ref in enumerate(DISTINCT):
        o = r.apply("t", f"m-{n}", "PAY_SUCCESS", {"channel_ref": ref, "amount": 1})
        assert o.applied, ref
    for n, ref in enumerate(DISTINCT):
        o = r.apply("t", f"again-{n}", "PAY_SUCCESS", {"amount": 1, "channel_ref": ref})
        assert (o.status, o.first_event_id) == (ALREADY, f"m-{n}"), ref
    assert r.load("t").state.context["paid"] == len(DISTINCT)
    assert r.verify("t").ok


def test_the_database_refuses_a_second_event_of_one_fact(runner: Runner) -> None:
    r = runner
    assert r.apply("t", "e1", "TaskStarted", START).applied
    [first] = r.store.events("t")
    copy = EventRow(
        instance_id="t",
        sequence=2,
        event_id="e2",
        type=first.type,
        payload=first.payload,
        payload_sha256=first.payload_sha256,
        status=first.status,
        chart_version=first.chart_version,
        evidence=first.evidence,
        recorded_at=first.recorded_at,
        idempotency_key=first.idempotency_key,
    )
    assert first.idempotency_key == "[1]"
    refused = (sqlite3.IntegrityError, psycopg.errors.UniqueViolation)
    with pytest.raises(refused), r.store.write():
        r.store.insert_events([copy])
    assert [e.event_id for e in r.history("t")] == ["e1"]


def test_an_event_without_a_declared_key_stores_none(store_url: str) -> None:
    text = FACTS.replace("  Heartbeat: [attempt]\n", "")
    r = Runner(chart_from(text), open_store(store_url))
    r.create("t")
    assert r.apply("t", "e1", "TaskStarted", START).applied
    assert r.apply("t", "h1", "Heartbeat", {"attempt": 1}).status is ALREADY
    assert r.apply("t", "h2", "Heartbeat", {"attempt": 1}).first_event_id is None
    assert [e.idempotency_key for e in r.store.events("t")] == ["[1]", None, None]


class _Undo(Exception):
    pass


def keyed_history(r: Runner) -> None:
    """e1 starts attempt 1; e2 re-sends it (audited duplicate), e3 with another worker
    (audited conflict); m-1 pays ch-1; heartbeats h1, h2 of attempts 1 and 2."""
    assert r.apply("t", "e1", "TaskStarted", START).applied
    assert r.apply("t", "e2", "TaskStarted", START).duplicate
    assert r.apply("t", "e3", "TaskStarted", {"attempt": 1, "worker": "x"}).reason == (
        "BUSINESS_KEY_CONFLICT"
    )
    assert r.apply("t", "m-1", "PAY_SUCCESS", {"channel_ref": "ch-1", "amount": 3}).applied
    assert r.apply("t", "h1", "Heartbeat", {"attempt": 1}).sequence == 3
    assert r.apply("t", "h2", "Heartbeat", {"attempt": 2}).sequence == 4


DUPLICATE_ROW, CONFLICT_ROW = "reason = 'DUPLICATE_FACT'", "reason = 'BUSINESS_KEY_CONFLICT'"
# (statements run in a transaction rolled back after): every one must make verify report.
KEY_TAMPERS = {
    "a key removed": ["UPDATE statekit_events SET idempotency_key = NULL WHERE event_id = 'e1'"],
    "a key changed": ["UPDATE statekit_events SET idempotency_key = '[2]' WHERE event_id = 'e1'"],
    "a string key changed": [
        "UPDATE statekit_events SET idempotency_key = '[\"ch-2\"]' WHERE event_id = 'm-1'"
    ],
    "a fact recorded twice": [
        "DROP INDEX statekit_events_idempotency",
        "UPDATE statekit_events SET idempotency_key = '[1]' WHERE event_id = 'h2'",
    ],
    "a duplicate naming another sequence": [
        "UPDATE statekit_rejections SET detail = REPLACE(detail, '\"sequence\":1', "
        f"'\"sequence\":2') WHERE {DUPLICATE_ROW}"
    ],
    "a duplicate naming another event": [
        "UPDATE statekit_rejections SET detail = REPLACE(detail, '\"e1\"', '\"m-1\"') "
        f"WHERE {DUPLICATE_ROW}"
    ],
    "a duplicate naming itself": [
        f"UPDATE statekit_rejections SET event_id = 'e1' WHERE {DUPLICATE_ROW}"
    ],
    "a duplicate of another fact": [
        "UPDATE statekit_rejections SET type = 'Heartbeat', payload = '{\"attempt\":1}' "
        f"WHERE {DUPLICATE_ROW}"
    ],
    "a duplicate as a conflict": [
        f"UPDATE statekit_rejections SET status = 'CONFLICT' WHERE {DUPLICATE_ROW}"
    ],
    "a conflict as a duplicate": [
        f"UPDATE statekit_rejections SET status = 'ALREADY_APPLIED' WHERE {CONFLICT_ROW}"
    ],
    "a conflict's reason changed": [
        f"UPDATE statekit_rejections SET reason = 'DUPLICATE_FACT' WHERE {CONFLICT_ROW}"
    ],
    "a conflict at an earlier version than its holder": [
        f"UPDATE statekit_rejections SET version = 0, detail = REPLACE(detail, "
        f"'\"version\":1', '\"version\":0') WHERE {CONFLICT_ROW}"
    ],
    "a conflict naming another event": [
        "UPDATE statekit_rejections SET detail = REPLACE(detail, '\"e1\"', '\"zz\"') "
        f"WHERE {CONFLICT_ROW}"
    ],
}


@pytest.mark.parametrize("statements", KEY_TAMPERS.values(), ids=list(KEY_TAMPERS))
def test_verify_reports_every_tampered_key(runner: Runner, statements: list[str]) -> None:
    r = runner
    keyed_history(r)
    assert r.verify("t").ok
    found: tuple[str, ...] = ()
    try:
        with r.store.write():
            for statement in statements:
                assert r.store.execute(statement).rowcount != 0, statement
            found = r.verify("t").differences
            raise _Undo
    except _Undo:
        pass
    assert found, statements
    assert r.verify("t").ok


def test_statekit_run_reports_a_re_sent_fact_and_verify_accepts_it(
    store_url: str, tmp_path: Path
) -> None:
    chart = str(write_chart(FACTS, tmp_path, "facts"))
    sent = [
        {"instance": "t", "event_id": "e1", "type": "TaskStarted", "payload": START},
        {"instance": "t", "event_id": "e2", "type": "TaskStarted", "payload": START},
        {"instance": "t", "event_id": "e3", "type": "TaskStarted",
         "payload": {"attempt": 1, "worker": "w-9"}},
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "run", chart, "--db", store_url],
        input="".join(json.dumps(line) + "\n" for line in sent),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o["status"], o["reason"], o.get("first_event_id")) for o in out] == [
        ("APPLIED", None, None),
        ("ALREADY_APPLIED", None, "e1"),
        ("CONFLICT", "BUSINESS_KEY_CONFLICT", "e1"),
    ]
    assert (out[1]["duplicate"], out[1]["sequence"]) == (True, 1)
    assert out[2]["conflict"]["event_id"] == "e1"
    verified = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "verify", "--db", store_url, "--chart", chart],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def undo_time_migration(store: Store) -> None:
    """Migration 4 undone by hand, as far as a schema-3 store differs from it (SQLite's
    rebuilt events table keeps its wider status check: no row uses it)."""
    store.execute("DROP TABLE statekit_timers")
    for table, column in (("statekit_instances", "timers"), ("statekit_instances",
                          "start_clock_ms"), ("statekit_events", "clock_ms")):  # fmt: skip
        store.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    store.execute("DELETE FROM statekit_schema_migrations WHERE version = 4")


def test_a_schema_2_database_gains_the_key_column_in_place(store_url: str) -> None:
    counter = chart_from(COUNTER)
    r = Runner(counter, open_store(store_url))
    r.create("c")
    assert r.apply("c", "e1", "Incr", {"by": 2}).applied
    assert LATEST == 12  # a later migration must be undone here too, before this one
    before_schema_5(r.store)
    with r.store.write():  # back to the schema before migration 3, by hand
        undo_time_migration(r.store)
        r.store.execute("DROP INDEX statekit_events_idempotency")
        r.store.execute("ALTER TABLE statekit_events DROP COLUMN idempotency_key")
        r.store.execute("DELETE FROM statekit_schema_migrations WHERE version = 3")
    r.store.close()
    upgraded = Runner(counter, open_store(store_url))  # migrated on open
    assert upgraded.store.schema_version() == LATEST
    assert [e.idempotency_key for e in upgraded.history("c")] == [None]
    assert upgraded.verify("c").ok
    assert upgraded.apply("c", "e2", "Incr", {"by": 1}).version == 2
    facts = Runner(chart_from(FACTS), upgraded.store)
    facts.create("t")
    assert facts.apply("t", "e1", "TaskStarted", START).applied
    assert facts.apply("t", "e2", "TaskStarted", START).first_event_id == "e1"

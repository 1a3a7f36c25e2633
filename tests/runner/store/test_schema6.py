"""Schema 6: packed event rows, outbox times from their events; old stores upgraded in place."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest
from runner_charts import COUNTER, FACTS, LEASE, chart_from
from store_legacy import before_schema_6

from statekit.engine.chart import Chart
from statekit.runner.evidence import stored_evidence
from statekit.runner.hashes import payload_digest, payload_text_and_digest
from statekit.runner.outbox import Dispatcher
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import LATEST
from statekit.runner.store.rows import EventRow
from statekit.runner.store_checks import verify_store

# Written by statekit at schema 5 (the commit before migration 6): a counter with applied,
# already-applied, rejected and conflicting events, snapshots, delivered, dead and pending
# messages and an inbox row; a task with business keys; a lease with timers, undelayed
# sends and a fired timer.
FIXTURE = Path(__file__).with_name("schema5_store.sql")
T1 = 1_700_000_011_000  # the fixture's clock after its timer fired
INSTANCES = {"c": COUNTER, "t": FACTS, "a": LEASE}


def _runners(store: Store) -> dict[str, Runner]:
    clock = lambda: T1  # noqa: E731
    return {
        name: Runner(
            Chart(chart_from(text).ir, source=textwrap.dedent(text).lstrip("\n")),
            store,
            clock=clock,
        )
        for name, text in INSTANCES.items()
    }


def _old_rows(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    events = conn.execute(
        "SELECT instance_id, sequence, event_id, lower(hex(payload_sha256)), evidence, status "
        "FROM statekit_events ORDER BY instance_id, sequence"
    ).fetchall()
    outbox = conn.execute(
        "SELECT id, message_id, created_at, status FROM statekit_outbox ORDER BY id"
    ).fetchall()
    conn.close()
    return events, outbox


def test_a_store_written_at_schema_5_is_upgraded_in_place_verified_and_continued(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    conn.close()
    events, outbox = _old_rows(path)
    assert len(events) == 11 and {r[5] for r in events} == {"APPLIED", "ALREADY_APPLIED"}
    store = open_store(f"sqlite:///{path}")
    assert store.schema_version() == LATEST >= 6
    # on disk: 8-byte hash checks, packed evidence, NULL for APPLIED, no rowid
    kept = store.execute(
        "SELECT length(payload_sha256), evidence, status FROM statekit_events"
    ).fetchall()
    assert {r[0] for r in kept} == {8}
    assert {r[1][0] if r[1] != "[2,[]]" else "no steps" for r in kept} == {"~", "no steps"}
    assert {r[2] for r in kept} == {None, "ALREADY_APPLIED"}
    table = store.execute("SELECT sql FROM sqlite_master WHERE name = 'statekit_events'")
    assert "WITHOUT ROWID" in table.fetchone()[0]
    indexes = store.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'statekit_outbox'")
    names = {r[0] for r in indexes.fetchall()}
    assert "statekit_outbox_dead" in names and "statekit_outbox_status" not in names
    # what every reader sees is unchanged
    assert verify_store(store) == []
    runners = _runners(store)
    for name, runner in runners.items():
        assert runner.verify(name).ok, runner.verify(name).differences
        old = [r for r in events if r[0] == name]
        history = runner.history(name)
        assert [e.payload_sha256 for e in history] == [r[3] for r in old]
        assert [e.status for e in history] == [r[5] for r in old]
        assert [e.evidence for e in history] == [
            stored_evidence(r[4], r[2], "fixture") for r in old
        ]
    now = store.outbox(["pending", "delivered", "dead"])
    assert [(m.id, m.message_id, m.created_at, m.status) for m in now] == outbox
    nulls = store.execute("SELECT COUNT(*) FROM statekit_outbox WHERE created_at IS NULL")
    assert nulls.fetchone()[0] == len(outbox)  # every message came with its event
    # and it goes on: duplicates, conflicts and facts are still recognised
    counter, facts, lease = runners["c"], runners["t"], runners["a"]
    assert counter.apply("c", "e1", "Incr", {"by": 2}).duplicate
    assert counter.apply("c", "e1", "Incr", {"by": 9}).reason == "EVENT_ID_PAYLOAD_CONFLICT"
    started = {"attempt": 1, "worker": "w-1"}
    assert facts.apply("t", "f9", "TaskStarted", started).first_event_id == "f1"
    paid = facts.apply("t", "f8", "PAY_SUCCESS", {"channel_ref": "r-1", "amount": 8})
    assert paid.reason == "BUSINESS_KEY_CONFLICT"
    assert counter.apply("c", "e7", "Incr", {"by": 1}).version == 5
    assert lease.apply("a", "l3", "Finish").applied
    assert counter.snapshot("c") == 5
    assert counter.rebuild("c").state == counter.load("c").state
    delivered: list[str] = []
    handlers = {
        t: lambda m: delivered.append(m.message_id)
        for t in ("Counted", "Started", "Paid", "NotedIt")
    }
    dispatcher = Dispatcher(store, handlers)
    while dispatcher.dispatch_once().delivered:
        pass
    assert "e7/0" in delivered and "e6/0" in delivered
    for name, runner in runners.items():
        assert runner.verify(name).ok, runner.verify(name).differences
    assert verify_store(store) == []


def _history(store_url: str) -> tuple[Store, dict[str, Runner]]:
    store = open_store(store_url)
    runners = _runners(store)
    counter, facts, lease = runners["c"], runners["t"], runners["a"]
    for name, runner in runners.items():
        runner.create(name)
    counter.snapshot_every = 2
    assert counter.apply("c", "e1", "Incr", {"by": 2}).applied
    assert counter.apply("c", "e2", "Ping", {}).version == 2
    assert counter.apply("c", "e3", "Incr", {"by": 0}).reason == "NOT_POSITIVE"
    assert facts.apply("t", "f1", "TaskStarted", {"attempt": 1, "worker": "w"}).applied
    assert lease.apply("a", "l1", "Start").applied
    assert lease.apply("a", "l2", "Echo", {"n": 4}).applied
    assert lease.fire_due(now_ms=T1 + 40_000)
    return store, runners


def test_a_schema_6_store_taken_back_to_schema_5_upgrades_to_the_same_rows(
    store_url: str,
) -> None:
    store, runners = _history(store_url)
    histories = {name: r.history(name) for name, r in runners.items()}
    messages = store.outbox(["pending", "delivered", "dead"])
    before_schema_6(store)
    store.close()
    store = open_store(store_url)
    assert store.schema_version() == LATEST
    runners = _runners(store)
    assert {name: r.history(name) for name, r in runners.items()} == histories
    assert store.outbox(["pending", "delivered", "dead"]) == messages
    for name, runner in runners.items():
        assert runner.verify(name).ok, runner.verify(name).differences
    assert runners["c"].apply("c", "e4", "Incr", {"by": 1}).version == 3
    assert verify_store(store) == []


# A payload hash check that is not its row's (tampered or damaged): read as it is, it
# matches no payload, so a redelivery is a payload conflict and verify says so.
BAD_HASHES = [
    bytes(8),  # eight zero bytes
    bytes.fromhex("ffffffffffffffff"),
    bytes(7),
    bytes(32),
    b"",
    bytes(range(40)),
]


@pytest.mark.parametrize("stored", BAD_HASHES, ids=lambda b: f"{len(b)}-bytes-{b[:1].hex()}")
def test_a_hash_check_that_is_not_the_rows_is_reported_never_trusted(
    store_url: str, stored: bytes
) -> None:
    runner = _runners(open_store(store_url))["c"]
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 2}).applied
    with runner.store.write():
        runner.store.execute("UPDATE statekit_events SET payload_sha256 = ?", (stored,))
    report = runner.verify("c")
    assert not report.ok and any("payload_sha256" in d for d in report.differences)
    again = runner.apply("c", "e1", "Incr", {"by": 2})
    assert again.reason == "EVENT_ID_PAYLOAD_CONFLICT" and not again.duplicate


@pytest.mark.parametrize("column", ["payload", "type"])
def test_a_payload_changed_under_its_hash_check_is_reported(store_url: str, column: str) -> None:
    runner = _runners(open_store(store_url))["c"]
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 2}).applied
    value = '{"by":3}' if column == "payload" else "Ping"
    with runner.store.write():
        runner.store.execute(f"UPDATE statekit_events SET {column} = ?", (value,))
    report = runner.verify("c")
    assert not report.ok and any("payload_sha256" in d for d in report.differences)


DAMAGED_PACKED = ["~", "~[", "~]]]]", "~{}", "~" + json.dumps("x"), "~~"]


@pytest.mark.parametrize("evidence", DAMAGED_PACKED)
def test_damaged_packed_evidence_is_reported_never_a_traceback(
    store_url: str, evidence: str
) -> None:
    runner = _runners(open_store(store_url))["c"]
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 2}).applied
    with runner.store.write():
        runner.store.execute("UPDATE statekit_events SET evidence = ?", (evidence,))
    report = runner.verify("c")
    assert not report.ok and any("evidence" in d for d in report.differences)


def _event_row(payload: str, sha256: str, digest: bytes | None) -> EventRow:
    return EventRow(
        instance_id="h",
        sequence=1,
        event_id="e1",
        type="Incr",
        payload=payload,
        payload_sha256=sha256,
        status="APPLIED",
        chart_version=1,
        evidence="{}",
        recorded_at=1.0,
        payload_digest=digest,
    )


def _written(store_url: str, row: EventRow) -> tuple[int, str]:
    """The stored hash's length and the hash read back, of `row` written alone."""
    store = open_store(store_url)
    with store.write():
        store.insert_events([row])
    stored = store.execute("SELECT payload_sha256 FROM statekit_events").fetchone()[0]
    (read,) = store.events("h")
    with store.write():
        store.execute("DELETE FROM statekit_events")
    store.close()
    return len(bytes(stored)), read.payload_sha256


def test_a_row_s_own_hash_is_kept_as_its_check_whether_or_not_its_writer_hashed_it(
    store_url: str,
) -> None:
    text, digest = payload_text_and_digest("Incr", {"by": 1})
    assert _written(store_url, _event_row(text, digest.hex(), digest)) == (8, digest.hex())
    assert _written(store_url, _event_row(text, digest.hex(), None)) == (8, digest.hex())


@pytest.mark.parametrize("carried", ["nothing", "the row's hash"])
def test_a_hash_that_is_not_the_row_s_is_kept_whole(store_url: str, carried: str) -> None:
    """A hash that is not the one of the row's type and payload is stored and read back as
    it is, whether the row carries no hash its writer computed or the row's own (the
    writer's word, `EventRow.payload_digest`, is that it hashed this very text)."""
    text, digest = payload_text_and_digest("Incr", {"by": 1})
    wrong = payload_digest("Incr", '{"by":2}')
    given = None if carried == "nothing" else digest
    assert _written(store_url, _event_row(text, wrong.hex(), given)) == (32, wrong.hex())

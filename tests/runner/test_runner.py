"""`Runner`: outcomes of apply, loading, chart versions and sources, on SQLite and on a real
PostgreSQL server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_charts import COUNTER, MACHINES, chart_from

import statekit
from statekit.runner.chart_versions import carry_over
from statekit.runner.errors import (
    ChartVersionError,
    CorruptRowError,
    InstanceExistsError,
    UnknownInstanceError,
)
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.transaction import Command

APPLIED, ALREADY = OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED
REJECTED, CONFLICT = OutcomeStatus.REJECTED, OutcomeStatus.CONFLICT


@pytest.fixture
def payment_runner(store_url: str) -> Runner:
    runner = statekit.Runner(
        statekit.load(MACHINES / "payment.yaml"), statekit.open_store(store_url)
    )
    runner.create("pay-1")
    return runner


def test_applied_event_writes_event_state_and_outbox_together(payment_runner: Runner) -> None:
    r = payment_runner
    o = r.apply("pay-1", "e1", "START_PAY", {"amount": 100}, expected_version=0)
    assert (o.status, o.version, o.sequence, o.reason) == (APPLIED, 1, 1, None)
    assert o.state.configuration == {"processing"} and o.result is not None
    o = r.apply("pay-1", "e2", "PAY_SUCCESS", {"channel_ref": "ch-1"}, expected_version=1)
    assert [m.message_id for m in o.emitted] == ["e2/0"]
    loaded = r.load("pay-1")
    assert (loaded.version, loaded.state) == (2, o.state)
    assert (loaded.chart_name, loaded.chart_version) == ("payment", 2)
    assert loaded.chart_digest == r.chart.digest
    history = r.history("pay-1")
    assert [(e.sequence, e.event_id, e.status) for e in history] == [
        (1, "e1", "APPLIED"),
        (2, "e2", "APPLIED"),
    ]
    assert history[1].evidence["microsteps"][0]["entered"] == ["success"]
    outbox = r.store.outbox(["pending"])
    assert [(m.message_id, m.sequence, m.type) for m in outbox] == [("e2/0", 2, "PaymentSucceeded")]
    assert json.loads(outbox[0].payload) == {"amount": 100, "channel_ref": "ch-1"}


def test_rejection_is_audited_and_changes_nothing(payment_runner: Runner) -> None:
    r = payment_runner
    o = r.apply("pay-1", "e1", "PAY_SUCCESS", {"channel_ref": "x"})
    assert (o.status, o.reason, o.version) == (REJECTED, "PAYMENT_NOT_STARTED", 0)
    assert r.history("pay-1") == [] and r.load("pay-1").version == 0
    [audit] = r.rejections("pay-1")
    assert (audit["event_id"], audit["reason"], audit["status"]) == (
        "e1",
        "PAYMENT_NOT_STARTED",
        "REJECTED",
    )
    # only accepted events claim an ID: the same ID may be sent again
    assert r.apply("pay-1", "e1", "START_PAY", {"amount": 5}).status is APPLIED


def test_unknown_event_and_bad_payload_are_rejections(payment_runner: Runner) -> None:
    r = payment_runner
    assert r.apply("pay-1", "e1", "NOPE").reason == "UNKNOWN_EVENT"
    assert r.apply("pay-1", "e2", "START_PAY", {"amount": "x"}).reason == "INVALID_PAYLOAD"
    assert r.load("pay-1").version == 0


def test_chart_already_is_recorded_and_claims_its_id_and_sequence(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    runner.create("c")
    o = runner.apply("c", "p1", "Ping", sequence=1)
    assert (o.status, o.version, o.sequence, o.duplicate) == (ALREADY, 1, 1, False)
    assert o.state == runner.chart.start() and o.emitted == ()
    again = runner.apply("c", "p1", "Ping")
    assert (again.status, again.duplicate, again.sequence, again.version) == (ALREADY, True, 1, 1)
    assert [e.status for e in runner.history("c")] == ["ALREADY_APPLIED"]


def test_version_conflict_names_the_winner(payment_runner: Runner) -> None:
    r = payment_runner
    r.apply("pay-1", "e1", "START_PAY", {"amount": 100})
    o = r.apply("pay-1", "e2", "PAY_SUCCESS", {"channel_ref": "x"}, expected_version=0)
    assert (o.status, o.reason, o.version) == (CONFLICT, "VERSION_CONFLICT", 1)
    assert o.conflict is not None
    assert (o.conflict.expected_version, o.conflict.event_id, o.conflict.sequence) == (0, "e1", 1)
    future = r.apply("pay-1", "e2", "PAY_SUCCESS", {"channel_ref": "x"}, expected_version=7)
    assert future.reason == "VERSION_CONFLICT" and future.conflict is not None
    assert future.conflict.event_id is None
    assert r.load("pay-1").version == 1 and r.rejections("pay-1") == []


def test_unknown_instance_is_a_clear_error(payment_runner: Runner) -> None:
    with pytest.raises(UnknownInstanceError, match="unknown instance 'nope'"):
        payment_runner.apply("nope", "e1", "START_PAY", {"amount": 1})
    with pytest.raises(UnknownInstanceError):
        payment_runner.load("nope")
    with pytest.raises(UnknownInstanceError):
        payment_runner.history("nope")


def test_create_twice(payment_runner: Runner) -> None:
    with pytest.raises(InstanceExistsError, match="pay-1"):
        payment_runner.create("pay-1")
    assert payment_runner.create("pay-1", exist_ok=True).version == 0


def test_reserved_and_empty_ids_are_refused(payment_runner: Runner) -> None:
    with pytest.raises(ValueError, match="reserved"):
        payment_runner.apply("pay-1", "statekit.start", "START_PAY", {"amount": 1})
    with pytest.raises(ValueError, match="non-empty"):
        payment_runner.apply("pay-1", "", "START_PAY", {"amount": 1})
    with pytest.raises(ValueError, match="sequence"):
        payment_runner.apply("pay-1", "e", "START_PAY", {"amount": 1}, sequence=0)


def test_nul_characters_are_refused_on_every_store(payment_runner: Runner) -> None:
    # PostgreSQL text cannot hold NUL: both stores refuse it before any SQL runs.
    with pytest.raises(ValueError, match="NUL"):
        payment_runner.apply("pay-1", "e\x00", "START_PAY", {"amount": 1})
    with pytest.raises(ValueError, match="NUL"):
        payment_runner.apply("pay-1", "e", "START\x00PAY", {"amount": 1})
    with pytest.raises(ValueError, match="NUL"):
        payment_runner.create("pay\x00x")


def test_creation_context_and_entry_messages(store_url: str) -> None:
    runner = Runner(statekit.load(MACHINES / "task.yaml"), open_store(store_url))
    created = runner.create("t", {"max_attempts": 5})
    assert created.state.context["max_attempts"] == 5
    assert runner.verify("t").ok


def test_corrupt_rows_are_clear_errors(payment_runner: Runner) -> None:
    r = payment_runner
    with r.store.write():
        r.store.execute(
            "UPDATE statekit_instances SET context = ? WHERE instance_id = ?",
            ("{not json", "pay-1"),
        )
    with pytest.raises(
        CorruptRowError, match="instance 'pay-1': the stored context is not valid JSON"
    ):
        r.load("pay-1")
    with r.store.write():
        r.store.execute(
            "UPDATE statekit_instances SET context = ? WHERE instance_id = ?",
            ('{"amount": "lots"}', "pay-1"),
        )
    with pytest.raises(CorruptRowError, match="does not fit its chart"):
        r.apply("pay-1", "e1", "START_PAY", {"amount": 1})


def test_a_corrupt_creation_context_is_reported_by_verify_and_rebuild(
    payment_runner: Runner,
) -> None:
    r = payment_runner
    assert r.apply("pay-1", "e1", "START_PAY", {"amount": 1}).applied
    for initial, problem in [("{not json", "not valid JSON"), ('{"amount": "x"}', "amount")]:
        with r.store.write():
            r.store.execute(
                "UPDATE statekit_instances SET initial_context = ? WHERE instance_id = ?",
                (initial, "pay-1"),
            )
        report = r.verify("pay-1")
        assert not report.ok and problem in report.differences[0], report
        assert "creation context" in report.differences[0]
        rebuilt = r.rebuild("pay-1")
        assert rebuilt.state is None and "creation context" in rebuilt.problems[0]


V3_REMOVES_FAILED = (MACHINES / "payment.yaml").read_text().replace("version: 2", "version: 3", 1)


def test_a_newer_chart_version_moves_instances_only_by_migration(store_url: str) -> None:
    store = open_store(store_url)
    v2 = Runner(statekit.load(MACHINES / "payment.yaml"), store)
    v2.create("p")
    v2.apply("p", "e1", "START_PAY", {"amount": 10})
    v3 = Runner(chart_from(V3_REMOVES_FAILED), store, previous=[v2.chart])
    assert v3.load("p").state.configuration == {"processing"}
    assert v3.load("p").chart_version == 2  # stays on its version
    assert v3.migrate("p").status == "MIGRATED"
    o = v3.apply("p", "e2", "PAY_SUCCESS", {"channel_ref": "x"})
    assert o.status is APPLIED
    loaded = v3.load("p")
    assert (loaded.chart_version, loaded.chart_digest) == (3, v3.chart.digest)
    assert [e.chart_version for e in v3.history("p")] == [2, 3, 3]
    assert v3.verify("p").ok
    # the old runner now meets an instance of a newer version: a clear error
    with pytest.raises(ChartVersionError, match="newer than this runner's version 2"):
        v2.load("p")


def test_a_chart_without_a_stored_state_strands_the_instance(store_url: str) -> None:
    store = open_store(store_url)
    v2 = Runner(statekit.load(MACHINES / "payment.yaml"), store)
    v2.create("p")
    v2.apply("p", "e1", "START_PAY", {"amount": 10})
    v3_text = COUNTER.replace("statechart: counter", "statechart: payment").replace(
        "version: 1", "version: 3"
    )
    v3 = Runner(chart_from(v3_text), store, previous=[v2.chart])
    report = v3.migrate("p")
    assert report.status == "STRANDED" and report.reason is not None
    assert "is in state 'processing', which chart" in report.reason
    # it stays on version 2 (its source is in the store), whatever runner serves it
    assert (
        Runner(chart_from(v3_text), store)
        .apply("p", "e2", "PAY_SUCCESS", {"channel_ref": "x"})
        .status
        is APPLIED
    )
    assert v3.load("p").chart_version == 2 and v3.verify("p").ok


def test_same_version_other_digest_is_refused(store_url: str) -> None:
    store = open_store(store_url)
    Runner(statekit.load(MACHINES / "payment.yaml"), store).create("p")
    changed = (MACHINES / "payment.yaml").read_text().replace("default: 3", "default: 4", 1)
    with pytest.raises(ChartVersionError, match=r"is in the store with digest .*bump `version:`"):
        Runner(chart_from(changed), store)
    with pytest.raises(ChartVersionError, match="runs on chart 'payment', not on 'counter'"):
        Runner(chart_from(COUNTER), store).load("p")


def test_apply_batch_classifies_each_event_in_one_transaction(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    runner.create("c")
    runner.apply("c", "before", "Incr", {"by": 1})
    outcomes = runner.apply_batch(
        "c",
        [
            Command("b1", "Incr", {"by": 2}, sequence=2),
            Command("b1", "Incr", {"by": 2}),  # duplicate of an event earlier in the batch
            Command("b2", "Incr", {"by": 0}),  # rejected
            Command("b3", "Incr", {"by": 3}, expected_version=1),  # stale
            Command("b4", "Incr", {"by": 4}, expected_version=2, sequence=3),
            Command("x", "Incr", {"by": 5}, sequence=2),  # sequence taken inside the batch
            Command("before", "Incr", {"by": 9}),  # ID recorded before the batch, other payload
        ],
    )
    assert [(o.status.value, o.reason, o.version) for o in outcomes] == [
        ("APPLIED", None, 2),
        ("ALREADY_APPLIED", None, 2),
        ("REJECTED", "NOT_POSITIVE", 2),
        ("CONFLICT", "VERSION_CONFLICT", 2),
        ("APPLIED", None, 3),
        ("CONFLICT", "DUPLICATE_OR_OLD_SEQUENCE", 3),
        ("CONFLICT", "EVENT_ID_PAYLOAD_CONFLICT", 3),
    ]
    assert outcomes[3].conflict is not None and outcomes[3].conflict.event_id == "b1"
    assert outcomes[5].conflict is not None and outcomes[5].conflict.event_id == "b1"
    loaded = runner.load("c")
    assert (loaded.version, loaded.state.context["total"]) == (3, 7)
    assert len(runner.rejections("c")) == 3 and runner.verify("c").ok
    with pytest.raises(UnknownInstanceError):
        runner.apply_batch("nope", [Command("e", "Incr", {"by": 1})])


RECALL_V1 = """
statechart: recall
version: 1
description: A screen whose history remembers the tab it left (for the runner's tests).
events:
  Switch: {}
  Leave: {}
  Back: {}
initial: tabs
states:
  tabs:
    initial: first
    on:
      Leave: away
    states:
      last_tab:
        history: shallow
        default: first
      first:
        on:
          Switch: second
      second: {}
  away:
    on:
      Back: last_tab
"""
RECALL_V2_WITHOUT_SECOND = RECALL_V1.replace("version: 1", "version: 2").replace(
    "      first:\n        on:\n          Switch: second\n      second: {}\n", "      first: {}\n"
)


def test_a_history_naming_a_removed_state_strands_the_instance(store_url: str) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(RECALL_V1), store)
    v1.create("r")
    v1.apply("r", "e1", "Switch")
    v1.apply("r", "e2", "Leave")
    stored = v1.load("r").state
    assert stored.configuration == {"away"}  # a state version 2 still has ...
    assert stored.history == {"tabs.last_tab": ("tabs.second",)}  # ... remembering one it lost
    v2 = Runner(chart_from(RECALL_V2_WITHOUT_SECOND), store, previous=[v1.chart])
    assert "tabs.second" not in v2.chart.ir.path_index
    message = "remembers state 'tabs.second' in its history, which chart 'recall' version 2"
    report = v2.migrate("r")
    assert report.status == "STRANDED" and report.reason is not None and message in report.reason
    # a history written before instances stayed on their version is carried over alike
    with pytest.raises(ChartVersionError, match=message):
        carry_over(stored, v2.chart)
    assert v1.load("r").version == 2  # nothing was written
    assert v2.apply("r", "e3", "Back").status is APPLIED  # still decided by version 1


def test_the_chart_source_is_kept_for_replay(store_url: str) -> None:
    store = open_store(store_url)
    Runner(statekit.Chart(statekit.compile(MACHINES / "payment.yaml")), store)  # no source
    [row] = store.charts()
    assert (row.name, row.source) == ("payment", None)
    Runner(statekit.load(MACHINES / "payment.yaml"), store)  # the text it compiled is kept
    [row] = store.charts()
    assert row.source == (MACHINES / "payment.yaml").read_text(encoding="utf-8")
    assert store.charts() == [row]


def test_a_chart_file_with_errors_is_a_compile_error(store_url: str, tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("statechart: [unclosed\n", encoding="utf-8")
    with pytest.raises(statekit.CompileError):
        Runner(statekit.load(tmp_path / "broken.yaml"), open_store(store_url))

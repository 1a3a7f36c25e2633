"""Schema 5: payload hashes as bytes, evidence in the compact form, old stores upgraded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_charts import COUNTER, FACTS, chart_from
from store_legacy import before_schema_5

from statekit.runner.errors import CorruptRowError
from statekit.runner.evidence import microstep_data
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.migrations import LATEST
from statekit.runner.store_checks import verify_store

FIXTURE = Path(__file__).with_name("schema3_store.sql")  # written by statekit at schema 3


def _old_store(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    conn.close()
    return path


def _old_events(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT instance_id, sequence, payload_sha256, evidence FROM statekit_events "
        "ORDER BY instance_id, sequence"
    ).fetchall()
    conn.close()
    return rows


def test_a_store_written_at_schema_3_is_upgraded_in_place_and_verifies(tmp_path: Path) -> None:
    path = _old_store(tmp_path)
    before = _old_events(path)
    assert before and all(len(r[2]) == 64 for r in before)  # hex text, full evidence
    store = open_store(f"sqlite:///{path}")
    assert store.schema_version() == LATEST
    kinds = store.execute("SELECT DISTINCT typeof(payload_sha256) FROM statekit_events")
    assert [r[0] for r in kinds.fetchall()] == ["blob"]
    assert verify_store(store) == []
    counter, facts = Runner(chart_from(COUNTER), store), Runner(chart_from(FACTS), store)
    for runner, instance in ((counter, "c"), (facts, "t")):
        assert runner.verify(instance).ok, runner.verify(instance).differences
        history = runner.history(instance)
        old = [r for r in before if r[0] == instance]
        assert [e.payload_sha256 for e in history] == [r[2] for r in old]
        assert [e.evidence for e in history] == [json.loads(r[3]) for r in old]
    # the converted hashes still recognise redeliveries and payload conflicts
    assert counter.apply("c", "e1", "Incr", {"by": 2}).duplicate
    assert counter.apply("c", "e1", "Incr", {"by": 9}).reason == "EVENT_ID_PAYLOAD_CONFLICT"
    started = {"attempt": 1, "worker": "w-1"}
    assert facts.apply("t", "f9", "TaskStarted", started).first_event_id == "f1"
    assert counter.apply("c", "e5", "Incr", {"by": 1}).applied  # new rows beside old ones
    assert counter.verify("c").ok
    assert verify_store(store) == []


def test_rows_in_the_old_form_read_and_verify_as_the_new_ones(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url), snapshot_every=2)
    runner.create("c")
    for n in range(5):
        runner.apply("c", f"e{n}", "Incr", {"by": n - 1})
    runner.apply("c", "p", "Ping", {})
    history = runner.history("c")
    before_schema_5(runner.store)
    runner.store.close()
    upgraded = Runner(chart_from(COUNTER), open_store(store_url))
    assert upgraded.store.schema_version() == LATEST
    assert upgraded.history("c") == history
    assert upgraded.verify("c").ok


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(
        st.tuples(st.sampled_from(["Incr", "Ping"]), st.integers(-3, 3), st.integers(0, 6)),
        max_size=12,
    )
)
def test_history_gives_the_full_evidence_of_every_step(
    tmp_path_factory: pytest.TempPathFactory, events: list[tuple[str, int, int]]
) -> None:
    """Whatever the events (applied, already applied, rejected, redelivered with the same
    or another payload), each accepted event's stored evidence reads back as the full
    form of the steps its outcome reported."""
    url = f"sqlite:///{tmp_path_factory.mktemp('ev') / 's.db'}"
    runner = Runner(chart_from(COUNTER), open_store(url))
    runner.create("c")
    expected: dict[int, dict[str, Any]] = {}
    for type_, by, ident in events:
        outcome = runner.apply("c", f"e{ident}", type_, {"by": by} if type_ == "Incr" else {})
        if outcome.sequence is not None and outcome.result is not None and not outcome.duplicate:
            steps = [microstep_data(s) for s in outcome.result.evidence]
            expected[outcome.sequence] = {"microsteps": steps}
    assert {e.sequence: e.evidence for e in runner.history("c")} == expected
    assert runner.verify("c").ok
    runner.store.close()


DAMAGED_EVIDENCE = [
    "[2]",
    "[3, []]",
    "[2, {}]",
    "[2, [[]]]",
    '[2, [["Incr", {}, [], [], [], [], 1]]]',
    '[2, [["Incr", {}, [], [], [], [], -1, []]]]',
    '[2, [["Incr", {}, [], [], [], [], 10000000000, []]]]',
    '[2, [["Incr", {}, [], [], [], [], "e1/0", []]]]',
    '[2, [["Incr", {}, {}, [], [], [], 1, []]]]',
    '[2, [["Incr", {}, [[0, "open"]], [], [], [], 1, []]]]',
    '[2, [["Incr", {}, [], [], [], [], 1, [], 5]]]',
    '[2, [["Incr", {"by": 2}, [[0, "open", [], "event"]], [], [], [], 2, []]]]',
    '"text"',
    "17",
    "[2, [], {}, 1]",
]


@pytest.mark.parametrize("evidence", DAMAGED_EVIDENCE)
def test_damaged_compact_evidence_is_reported_never_a_traceback(
    tmp_path: Path, evidence: str
) -> None:
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{tmp_path / 's.db'}"))
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 2}).applied
    with runner.store.write():
        runner.store.execute("UPDATE statekit_events SET evidence = ?", (evidence,))
    report = runner.verify("c")
    assert not report.ok and any("evidence" in d for d in report.differences)
    try:
        history = runner.history("c")
    except CorruptRowError as exc:
        assert "evidence" in str(exc)
    else:  # a well-formed text that says something else: verify's difference above
        assert history[0].evidence != {"microsteps": []}

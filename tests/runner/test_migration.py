"""Chart evolution in the runner: instances stay on their chart version until
`Runner.migrate` moves them, with a history entry that replay reproduces and
`verify` checks, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import pytest
from runner_charts import cancellation_wins, chart_from

from statekit.runner.errors import ChartVersionError
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

APPLIED, REJECTED = OutcomeStatus.APPLIED, OutcomeStatus.REJECTED

TASK_V1 = """
statechart: task
version: 1
description: Version 1 of a task, where a completion that arrives while cancelling wins.
context:
  attempt: {type: integer, default: 0}
  note: {type: string, default: ""}
events:
  TaskStarted: {attempt: integer}
  CancelRequested: {}
  TaskCompleted: {}
  Reconciled: {}
initial: queued
states:
  queued:
    on:
      TaskStarted: {to: running, do: [{assign: {attempt: event.attempt}}]}
  running:
    on:
      CancelRequested: cancelling
      TaskCompleted: completed
  cancelling:
    on:
      TaskCompleted: completed
      Reconciled: cancelled
  completed: {final: true}
  cancelled: {final: true}
"""

TASK_V2 = cancellation_wins(TASK_V1).replace(
    "Version 1 of a task, where a completion", "Version 2, where a cancellation"
)


def _runners(store_url: str) -> tuple[Runner, Runner]:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store)
    v2 = Runner(chart_from(TASK_V2), store, previous=[v1.chart])
    return v1, v2


def _cancelling(runner: Runner, instance_id: str) -> None:
    runner.create(instance_id)
    runner.apply(instance_id, f"{instance_id}-s", "TaskStarted", {"attempt": 1})
    runner.apply(instance_id, f"{instance_id}-c", "CancelRequested")


def test_a_version_1_task_in_cancelling_keeps_completion_wins_until_migrated(
    store_url: str,
) -> None:
    v1, v2 = _runners(store_url)
    _cancelling(v1, "t1")
    _cancelling(v1, "t2")
    # the version-2 runner decides t1's event with version 1, the version it runs on
    o = v2.apply("t1", "t1-done", "TaskCompleted")
    assert o.status is APPLIED and o.state.configuration == {"completed"}
    assert v2.load("t1").chart_version == 1
    assert [e.chart_version for e in v2.history("t1")] == [1, 1, 1]
    # migrated, t2 answers with version 2's policy
    report = v2.migrate("t2")
    assert (report.status, report.from_version, report.to_version) == ("MIGRATED", 1, 2)
    assert report.sequence == 3 and report.configuration == ("cancelling",)
    o = v2.apply("t2", "t2-done", "TaskCompleted")
    assert (o.status, o.reason) == (REJECTED, "CANCELLATION_WON")
    assert v2.load("t2").chart_version == 2
    assert v2.verify("t1").ok and v2.verify("t2").ok


def test_migrate_writes_an_entry_that_history_lists_and_replay_reproduces(
    store_url: str,
) -> None:
    v1, v2 = _runners(store_url)
    _cancelling(v1, "t")
    before = v2.load("t")
    report = v2.migrate("t")
    entry = v2.history("t")[-1]
    assert (entry.sequence, entry.event_id, entry.type) == (
        3,
        "statekit.migrate.v1.v2",
        "statekit.migrate",
    )
    assert (entry.status, entry.chart_version) == ("APPLIED", 2)
    assert entry.payload == {"from": 1, "to": 2, "mapping": report.mapping}
    recorded = entry.evidence["migration"]
    assert (recorded["from"], recorded["to"]) == (1, 2)
    assert (recorded["from_digest"], recorded["to_digest"]) == (v1.chart.digest, v2.chart.digest)
    assert recorded["state_sha256_before"] == report.state_sha256_before
    assert recorded["state_sha256_after"] == report.state_sha256_after
    assert report.state_sha256_before != report.state_sha256_after
    after = v2.load("t")
    assert (after.version, after.chart_version) == (before.version + 1, 2)
    assert after.state.configuration == {"cancelling"}
    assert after.state.context == before.state.context
    rebuilt = v2.rebuild("t")
    assert rebuilt.state == after.state and rebuilt.problems == ()
    assert v2.verify("t").ok
    # idempotent: a second migration changes nothing
    again = v2.migrate("t")
    assert (again.status, again.sequence) == ("CURRENT", None)
    assert len(v2.history("t")) == 3


def test_snapshots_before_a_migration_still_rebuild_through_it(store_url: str) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store, snapshot_every=1)
    v2 = Runner(chart_from(TASK_V2), store, previous=[v1.chart], snapshot_every=1)
    _cancelling(v1, "t")
    v2.migrate("t")
    v2.apply("t", "r", "Reconciled")
    rebuilt = v2.rebuild("t")
    assert rebuilt.problems == () and rebuilt.state == v2.load("t").state
    assert v2.verify("t").ok


def test_a_dry_run_writes_nothing(store_url: str) -> None:
    v1, v2 = _runners(store_url)
    _cancelling(v1, "t")
    report = v2.migrate("t", dry_run=True)
    assert (report.status, report.sequence) == ("WOULD_MIGRATE", None)
    assert report.mapped_configuration == ("cancelling",)
    assert v2.load("t").chart_version == 1 and len(v2.history("t")) == 2


@pytest.mark.parametrize(
    ("change", "events", "why"),
    [
        (("cancelling:", "halting:"), ["CancelRequested"], "'cancelling'"),
        (('note: {type: string, default: ""}', "note: {type: integer, default: 0}"), [], "note"),
        (("queued:", "waiting:"), [], "'queued'"),
        (
            ("  completed: {final: true}\n", "  completed: {final: true}\nnever: x\n"),
            [],
            None,
        ),
    ],
    ids=["state-removed", "context-type", "initial-renamed", "control"],
)
def test_a_state_that_does_not_map_is_stranded_and_untouched(
    store_url: str, change: tuple[str, str], events: list[str], why: str | None
) -> None:
    old, new = change
    v2_text = TASK_V1.replace("version: 1", "version: 2", 1).replace(old, new)
    v2_text = v2_text.replace("\nnever: x\n", "\n")
    if old == "cancelling:":
        v2_text = v2_text.replace("CancelRequested: cancelling", "CancelRequested: halting")
    if old == "queued:":
        v2_text = v2_text.replace("initial: queued", "initial: waiting")
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store)
    v2 = Runner(chart_from(v2_text), store, previous=[v1.chart])
    v1.create("t")
    if events:
        v1.apply("t", "s", "TaskStarted", {"attempt": 1})
        for i, event in enumerate(events):
            v1.apply("t", f"e{i}", event)
    before = v2.history("t")
    report = v2.migrate("t")
    if why is None:
        assert report.status == "MIGRATED"
        return
    assert report.status == "STRANDED" and report.reason is not None and why in report.reason
    assert report.sequence is None and v2.history("t") == before
    assert v2.load("t").chart_version == 1 and v2.verify("t").ok


def test_an_instance_on_a_version_the_runner_cannot_find_is_an_error(store_url: str) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store)
    v1.create("t")
    v3_chart = chart_from(TASK_V1.replace("version: 1", "version: 3", 1))
    with pytest.raises(ChartVersionError, match=r"version 1 .* which this runner does not have"):
        Runner(v3_chart, store).migrate("t")
    v3 = Runner(v3_chart, store, previous=[v1.chart])
    assert v3.migrate("t").status == "MIGRATED"
    assert v3.load("t").chart_version == 3
    with pytest.raises(ChartVersionError, match="newer than this runner's version 1"):
        v1.load("t")
    with pytest.raises(ChartVersionError, match="newer than this runner's version 1"):
        v1.migrate("t")


MIGRATION_ROW = "event_id = 'statekit.migrate.v1.v2'"
# what is changed in the migrated history → (table, SET, WHERE); verify must see each
ENTRY_TAMPER: dict[str, tuple[str, str, str]] = {
    "entry payload (mapping)": (
        "statekit_events",
        'payload = REPLACE(payload, \'"dropped":[]\', \'"dropped":["x"]\')',
        MIGRATION_ROW,
    ),
    "entry from version": (
        "statekit_events",
        "payload = REPLACE(payload, '\"from\":1', '\"from\":0')",
        MIGRATION_ROW,
    ),
    "entry state sha256 before": (
        "statekit_events",
        'evidence = REPLACE(evidence, \'"state_sha256_before":"\', \'"state_sha256_before":"0\')',
        MIGRATION_ROW,
    ),
    "entry state sha256 after": (
        "statekit_events",
        'evidence = REPLACE(evidence, \'"state_sha256_after":"\', \'"state_sha256_after":"0\')',
        MIGRATION_ROW,
    ),
    "entry from digest": (
        "statekit_events",
        'evidence = REPLACE(evidence, \'"from_digest":"sha256:\', \'"from_digest":"sha256:0\')',
        MIGRATION_ROW,
    ),
    "entry chart version": ("statekit_events", "chart_version = 1", MIGRATION_ROW),
    "entry status": ("statekit_events", "status = 'ALREADY_APPLIED'", MIGRATION_ROW),
    "entry type (an ordinary event)": ("statekit_events", "type = 'Reconciled'", MIGRATION_ROW),
    "entry removed (instance still on version 2)": (
        "statekit_events",
        "sequence = 99",
        MIGRATION_ROW,
    ),
    "instance back on version 1": (
        "statekit_instances",
        "chart_version = 1",
        "instance_id = 't'",
    ),
    "migrated context": (
        "statekit_instances",
        "context = REPLACE(context, '\"attempt\":1', '\"attempt\":2')",
        "instance_id = 't'",
    ),
}


class _Undo(Exception):
    pass


@pytest.mark.parametrize("what", sorted(ENTRY_TAMPER))
def test_verify_reports_every_change_to_a_migrated_history(store_url: str, what: str) -> None:
    v1, v2 = _runners(store_url)
    _cancelling(v1, "t")
    v2.migrate("t")
    assert v2.verify("t").ok
    table, assignment, where = ENTRY_TAMPER[what]
    store = v2.store
    try:
        with store.write():
            cursor = store.execute(f"UPDATE {table} SET {assignment} WHERE {where}")
            assert cursor.rowcount == 1
            report = v2.verify("t")
            raise _Undo
    except _Undo:
        pass
    assert not report.ok, what
    assert v2.verify("t").ok

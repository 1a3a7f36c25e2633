"""A paused timer in the durable runner (SQLite and PostgreSQL): its row keeps the timer
with its time left (`paused_ms` in the record) and a due time that never comes, so no
worker delivers it, `statekit timers` lists it as paused, `verify` replays the pause, a
delivery of it is `PAUSED_TIMER` and writes nothing, and a migration to a version that
re-times it keeps it paused (`due: recompute` moves its time left by the change), a
snapshot keeps it, and a paused row tampered with (its due time, its time left, its
pause) never fires and is reported by `verify`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import statekit as statekit_cli
from runner_charts import chart_from

import statekit
from statekit.runner.store.rows import STORED_INT_MAX
from statekit.runner.timers import timer_event_id

V1 = """
statechart: hold
version: VERSION
description: an order whose SLA pauses while it is on hold
events: {HOLD: {}, RELEASE: {}}
initial: open
states:
  open:
    after: [{id: sla, delay: DELAY, to: late}]
    initial: active
    states:
      active: {on: {HOLD: on_hold}}
      on_hold:
        entry: [{pause: sla}]
        exit: [{resume: sla}]
        on: {RELEASE: active}
  late: {final: true}
"""
SLA = "after(sla)@open"
T0 = 1_767_225_600_000


def chart(version: int = 1, delay: str = "10s", migration: str = "") -> statekit.Chart:
    text = V1.replace("VERSION", str(version)).replace("DELAY", delay)
    return chart_from(text.replace("events:", migration + "events:", 1))


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def held(store_url: str, clock: Clock) -> statekit.Runner:
    runner = statekit.Runner(chart(), statekit.open_store(store_url), clock=clock)
    runner.create("o-1")
    clock.now += 4_000
    runner.apply("o-1", "e1", "HOLD", {})
    return runner


def test_a_paused_timer_row_never_comes_due_and_is_listed_as_paused(
    store_url: str, tmp_path: Path
) -> None:
    clock = Clock()
    runner = held(store_url, clock)
    (row,) = runner.store.timers("o-1")
    assert (row.timer_id, row.generation, row.due_ms) == (SLA, 2, STORED_INT_MAX)
    record = json.loads(row.record or "")
    assert (record["paused_ms"], record["due_ms"]) == (6_000, None)
    clock.now += 10**9
    assert runner.fire_due() == []
    (chart_file := tmp_path / "hold.yaml").write_text(
        V1.replace("VERSION", "1").replace("DELAY", "10s")
    )
    worker = statekit_cli(
        "worker", "--db", store_url, "--chart", str(chart_file), "--once", "--now", str(clock.now)
    )
    assert (worker.returncode, worker.stdout) == (0, ""), worker.stderr
    listed = statekit_cli("timers", "--db", store_url)
    assert listed.stdout == "o-1  hold v1  after(sla)@open  paused, 6s left\n", listed.stderr
    (line,) = statekit_cli("timers", "--db", store_url, "--format", "json").stdout.splitlines()
    assert json.loads(line) == {
        "chart": "hold",
        "chart_version": 1,
        "instance": "o-1",
        "timer": SLA,
        "event": SLA,
        "generation": 2,
        "due_ms": None,
        "in_ms": None,
        "paused_ms": 6_000,
    }
    assert runner.verify("o-1").ok
    runner.store.close()


def test_a_delivery_of_a_paused_timer_is_paused_timer_and_writes_nothing(store_url: str) -> None:
    clock = Clock()
    runner = held(store_url, clock)
    before = runner.load("o-1")
    refused = runner.park_timer("o-1", SLA, 2)
    assert (refused.status, refused.reason) == (statekit.OutcomeStatus.REJECTED, "PAUSED_TIMER")
    after = runner.load("o-1")
    assert (after.version, after.state) == (before.version, before.state)
    assert [e.event_id for e in runner.history("o-1")] == ["e1"]
    assert timer_event_id(SLA, 2) not in {e.event_id for e in runner.history("o-1")}
    runner.apply("o-1", "e2", "RELEASE", {})
    (row,) = runner.store.timers("o-1")
    assert (row.generation, row.due_ms) == (3, clock.now + 6_000)
    assert runner.verify("o-1").ok
    runner.store.close()


def test_a_migration_keeps_a_paused_timer_paused_and_recompute_moves_its_time_left(
    store_url: str,
) -> None:
    clock = Clock()
    held(store_url, clock).store.close()
    migration = """migrations:
  - from: 1
    description: the SLA is fifteen seconds now
    timers:
      "after(sla)@open": {to: "after(sla)@open", due: recompute}
"""
    v2 = chart(2, "15s", migration)
    store = statekit.open_store(store_url)
    runner = statekit.Runner(v2, store, clock=clock, previous=[chart()])
    runner.migrate("o-1")
    timer: Any = runner.load("o-1").state.timer(SLA)
    assert (timer.paused_ms, timer.due_ms, timer.delay_ms) == (11_000, None, 15_000)
    runner.apply("o-1", "e2", "RELEASE", {})
    timer = runner.load("o-1").state.timer(SLA)
    assert timer.due_ms == clock.now + 11_000
    assert runner.verify("o-1").ok
    store.close()


def test_a_snapshot_keeps_the_pause_and_rebuild_restores_it(store_url: str) -> None:
    clock = Clock()
    runner = held(store_url, clock)
    assert runner.snapshot("o-1") == 1
    snapshot = runner.store.snapshots("o-1")[0]
    assert '"paused_ms":6000' in snapshot.state
    clock.now += 1_000
    runner.apply("o-1", "e2", "RELEASE", {})
    rebuilt = runner.rebuild("o-1")
    assert rebuilt.snapshot == 1 and rebuilt.state == runner.load("o-1").state
    assert rebuilt.state is not None
    (timer,) = rebuilt.state.timers
    assert (timer.paused_ms, timer.due_ms) == (None, clock.now + 6_000)
    assert runner.verify("o-1").ok
    runner.store.close()


ROW = f"instance_id = 'o-1' AND timer_id = '{SLA}'"
TAMPERED: dict[str, str] = {
    "due moved to now": f"UPDATE statekit_timers SET due_ms = {T0} WHERE {ROW}",
    "time left altered": (
        f"UPDATE statekit_timers SET record = REPLACE(record, '6000', '5000') WHERE {ROW}"
    ),
    "pause removed from the record": (
        "UPDATE statekit_timers SET record = REPLACE(record, '\"paused_ms\":6000,', '') "
        f"WHERE {ROW}"
    ),
}


@pytest.mark.parametrize("what", sorted(TAMPERED))
def test_a_tampered_paused_row_never_fires_and_verify_reports_it(store_url: str, what: str) -> None:
    clock = Clock()
    runner = held(store_url, clock)
    with runner.store.write():
        assert runner.store.execute(TAMPERED[what]).rowcount == 1
    runner.store.close()
    clock.now += 10**6
    restarted = statekit.Runner(chart(), statekit.open_store(store_url), clock=clock)
    assert restarted.fire_due() == [], what  # read from the rows, not remembered
    assert [e.event_id for e in restarted.history("o-1")] == ["e1"]
    assert not restarted.verify("o-1").ok, what
    restarted.store.close()

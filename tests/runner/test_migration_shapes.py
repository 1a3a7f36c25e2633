"""Migration is a verified, replayable history entry for every shape of instance: created
with no events, with events, with an armed timer in a renamed state or in one kept
as it was, with a snapshot before the migration; on SQLite and on PostgreSQL. After
`Runner.migrate`, `verify` is clean, `rebuild` gives the stored state, and a timer
moved with its renamed state is delivered at its original due time, not before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from runner_charts import chart_from

from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

T0 = 1_700_000_000_000

V1 = """
statechart: shift
version: 1
description: A shift for the migration tests (two timed states, one renamed in version 2).
context:
  n: {type: integer, default: 0}
events:
  Open: {}
  Hold: {}
  Bump: {}
initial: idle
states:
  idle:
    on:
      Open: waiting
      Hold: held
      Bump: {do: [{assign: {n: ctx.n + 1}}]}
  waiting:
    after:
      30s: expired
  held:
    after:
      1m: expired
  expired: {final: true}
"""

V2 = (
    V1.replace(
        "version: 1\n", "version: 2\nmigrations:\n  - from: 1\n    rename: {waiting: pending}\n"
    )
    .replace("Open: waiting", "Open: pending")
    .replace("  waiting:\n", "  pending:\n")
    .replace("(two timed states, one renamed in version 2)", "(waiting is pending now)")
)


class Clock:
    """An injected clock: epoch milliseconds, moved by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def _no_events(r: Runner, i: str) -> None:
    r.create(i)


def _events(r: Runner, i: str) -> None:
    r.create(i)
    r.apply(i, f"{i}-1", "Bump")
    r.apply(i, f"{i}-2", "Bump")


def _timer_renamed(r: Runner, i: str) -> None:
    r.create(i)
    r.apply(i, f"{i}-1", "Open")  # arms after(30s)@waiting, due T0 + 30 s


def _timer_kept(r: Runner, i: str) -> None:
    r.create(i)
    r.apply(i, f"{i}-1", "Hold")  # arms after(1m)@held, due T0 + 60 s


def _snapshot(r: Runner, i: str) -> None:
    _events(r, i)
    r.snapshot(i)  # a snapshot of version 1, before the migration


# shape → (how to make it under version 1, configuration after migrating, the timer armed
# after migrating and its due time, or None)
SHAPES: dict[str, tuple[Callable[[Runner, str], None], set[str], tuple[str, int] | None]] = {
    "no events": (_no_events, {"idle"}, None),
    "events": (_events, {"idle"}, None),
    "timer in a renamed state": (_timer_renamed, {"pending"}, ("after(30s)@pending", T0 + 30_000)),
    "timer in a kept state": (_timer_kept, {"held"}, ("after(1m)@held", T0 + 60_000)),
    "snapshot before": (_snapshot, {"idle"}, None),
}


def _timer_rows(runner: Runner, instance_id: str) -> dict[str, tuple[Any, ...]]:
    return {
        r.timer_id: (r.generation, r.event, r.due_ms, r.sequence)
        for r in runner.store.timers(instance_id)
    }


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_migrated_instance_verifies_rebuilds_and_keeps_its_timers(
    store_url: str, shape: str
) -> None:
    make, configuration, timer = SHAPES[shape]
    clock = Clock()
    store = open_store(store_url)
    v1 = Runner(chart_from(V1), store, clock=clock)
    make(v1, "i")
    before = _timer_rows(v1, "i")
    clock.now = T0 + 1_000  # the migration happens later: the due times must not move
    v2 = Runner(chart_from(V2), store, previous=[v1.chart], clock=clock)
    report = v2.migrate("i")
    assert report.status == "MIGRATED", report.reason
    loaded = v2.load("i")
    assert loaded.chart_version == 2 and set(loaded.state.configuration) == configuration
    checked = v2.verify("i")
    assert checked.ok, (checked.differences, checked.snapshot_problems)
    rebuilt = v2.rebuild("i")
    assert not rebuilt.problems and rebuilt.version == loaded.version
    assert rebuilt.state == loaded.state
    assert v2.migrate("i").status == "CURRENT"
    if timer is None:
        assert _timer_rows(v2, "i") == {}
        return
    timer_id, due = timer
    ((generation, _, old_due, armed_by),) = before.values()
    assert old_due == due
    assert _timer_rows(v2, "i") == {timer_id: (generation, timer_id, due, armed_by)}
    assert v2.fire_due(now_ms=due - 1) == []  # never early
    (delivered,) = v2.fire_due(now_ms=due)
    assert delivered.status is OutcomeStatus.APPLIED and delivered.instance_id == "i"
    assert set(v2.load("i").state.configuration) == {"expired"}
    assert _timer_rows(v2, "i") == {}
    checked = v2.verify("i")
    assert checked.ok, (checked.differences, checked.snapshot_problems)
    assert v2.rebuild("i").state == v2.load("i").state


def test_a_snapshot_on_the_migration_entry_verifies(store_url: str) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(V1), store, clock=Clock())
    _timer_renamed(v1, "i")
    v2 = Runner(chart_from(V2), store, previous=[v1.chart], snapshot_every=2, clock=Clock())
    assert v2.migrate("i").sequence == 2  # a snapshot falls on the entry
    assert [s.through_sequence for s in store.snapshots("i")] == [2]
    checked = v2.verify("i")
    assert checked.ok, (checked.differences, checked.snapshot_problems)
    rebuilt = v2.rebuild("i")
    assert rebuilt.snapshot == 2 and rebuilt.state == v2.load("i").state


@pytest.mark.parametrize("shape", ["no events", "timer in a renamed state"])
def test_two_migrations_in_a_row_verify_and_rebuild(store_url: str, shape: str) -> None:
    make, _, timer = SHAPES[shape]
    store = open_store(store_url)
    v1 = Runner(chart_from(V1), store, clock=Clock())
    make(v1, "i")
    v2 = Runner(chart_from(V2), store, previous=[v1.chart], clock=Clock())
    v3_text = V2.replace("version: 2\n", "version: 3\n").replace("(waiting", "(version 3, waiting")
    v3 = Runner(chart_from(v3_text), store, previous=[v1.chart, v2.chart], clock=Clock())
    assert [v2.migrate("i").status, v3.migrate("i").status] == ["MIGRATED", "MIGRATED"]
    checked = v3.verify("i")
    assert checked.ok, (checked.differences, checked.snapshot_problems)
    assert v3.rebuild("i").state == v3.load("i").state
    if timer is not None:
        assert list(_timer_rows(v3, "i")) == [timer[0]]

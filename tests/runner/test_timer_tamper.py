"""Stored timers that do not fit: `verify` reports each, `fire_due` and the worker skip it.

Two tables, on each store. TAMPER changes one column of time (or removes or adds a
timer row) inside a transaction rolled back afterwards; `verify` plus `verify_store`
must report a difference. CORRUPT damages one stored timer row (or what it points
at) for good; `fire_due` must not deliver it (in particular never before its real
due time), must record why in `timer_problems`, must still deliver the healthy
timers behind it, and must not come back to it (no crash loop); `verify` or
`verify_store` must report it too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from runner_charts import LEASE, chart_from

from statekit.runner.chart_versions import chart_sets
from statekit.runner.errors import RunnerError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store_checks import verify_store
from statekit.runner.verify import verify

T0 = 1_700_000_000_000
AFTER = "after(30s)@running"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def _filled(url: str) -> Runner:
    """Instance `a`: started at T0 + 7 (a reminder and an expiry armed at #1); instance
    `quiet`: only created (its idle timer armed at creation, sequence 0); then the
    clock reads T0 + 3."""
    clock = Clock()
    runner = Runner(chart_from(LEASE), open_store(url), clock=clock)
    runner.create("a")
    clock.now = T0 + 7
    runner.apply("a", "e1", "Start")
    clock.now = T0 + 3
    runner.create("quiet")
    return runner


A = "instance_id = 'a' AND timer_id = 'reminder'"
TAMPER: dict[str, tuple[str, ...]] = {
    "instances.timers": (
        "UPDATE statekit_instances SET timers = REPLACE(timers, ':', ':1') WHERE instance_id = 'a'",
    ),
    "instances.start_clock_ms": (
        "UPDATE statekit_instances SET start_clock_ms = start_clock_ms + 1 "
        "WHERE instance_id = 'quiet'",
    ),
    "events.clock_ms": (
        "UPDATE statekit_events SET clock_ms = clock_ms + 1 WHERE instance_id = 'a'",
    ),
    "events.status": ("UPDATE statekit_events SET status = 'REJECTED' WHERE instance_id = 'a'",),
    "timers.instance_id": (f"UPDATE statekit_timers SET instance_id = 'zz' WHERE {A}",),
    "timers.timer_id": (f"UPDATE statekit_timers SET timer_id = 'other' WHERE {A}",),
    "timers.generation": (f"UPDATE statekit_timers SET generation = 99 WHERE {A}",),
    "timers.event": (f"UPDATE statekit_timers SET event = 'Beat' WHERE {A}",),
    "timers.payload": (f"UPDATE statekit_timers SET payload = '{{\"n\":2}}' WHERE {A}",),
    "timers.due_ms": (f"UPDATE statekit_timers SET due_ms = due_ms - 1 WHERE {A}",),
    "timers.sequence": (f"UPDATE statekit_timers SET sequence = 0 WHERE {A}",),
    "timers.record": (
        f"UPDATE statekit_timers SET record = REPLACE(record, '10007', '10008') WHERE {A}",
    ),
    "timers.record missing": (f"UPDATE statekit_timers SET record = NULL WHERE {A}",),
    "timers.record of another timer": (
        "UPDATE statekit_timers SET record = (SELECT r.record FROM statekit_timers r WHERE "
        f"r.instance_id = 'a' AND r.timer_id <> 'reminder') WHERE {A}",
    ),
    "a missing row": (f"DELETE FROM statekit_timers WHERE {A}",),
    "an extra row": (
        "INSERT INTO statekit_timers (instance_id, timer_id, generation, event, payload, "
        "due_ms, sequence) VALUES ('quiet', 'reminder', 1, 'Remind', '{\"n\":1}', 5, 0)",
    ),
}


@pytest.fixture
def filled(store_url: str) -> Iterator[Runner]:
    runner = _filled(store_url)
    yield runner
    runner.store.close()


def _differences(store: Store, runner: Runner) -> list[str]:
    found = list(verify_store(store))
    charts = chart_sets(store, [runner.chart])
    for instance in store.instance_ids():
        try:
            report = verify(store, charts[runner.chart.name], instance)
        except RunnerError as exc:
            found.append(str(exc))
            continue
        found.extend(report.differences + report.snapshot_problems)
    return found


def test_the_untouched_store_verifies(filled: Runner) -> None:
    assert _differences(filled.store, filled) == []


class _Rollback(Exception):
    pass


@pytest.mark.parametrize("what", sorted(TAMPER))
def test_every_tampered_timer_column_is_reported(filled: Runner, what: str) -> None:
    store = filled.store
    found: list[str] = []
    with pytest.raises(_Rollback), store.write():
        for statement in TAMPER[what]:
            assert store.execute(statement).rowcount == 1, statement
        found = _differences(store, filled)
        raise _Rollback
    assert found, f"tampering with {what} went unnoticed"
    assert _differences(store, filled) == []  # rolled back


# name → (statements damaging the store for good, a word the problem must contain)
CORRUPT: dict[str, tuple[tuple[str, ...], str]] = {
    "payload not JSON": ((f"UPDATE statekit_timers SET payload = '{{' WHERE {A}",), "payload"),
    "payload altered": (
        (f"UPDATE statekit_timers SET payload = '{{\"n\":9}}' WHERE {A}",),
        "payload",
    ),
    "event altered": ((f"UPDATE statekit_timers SET event = 'Finish' WHERE {A}",), "event"),
    "generation altered": ((f"UPDATE statekit_timers SET generation = 7 WHERE {A}",), "generation"),
    "due moved earlier": ((f"UPDATE statekit_timers SET due_ms = 5 WHERE {A}",), "due_ms"),
    "due moved later": ((f"UPDATE statekit_timers SET due_ms = due_ms + 1 WHERE {A}",), "due_ms"),
    "unknown timer": ((f"UPDATE statekit_timers SET timer_id = 'nope' WHERE {A}",), "no such"),
    "unknown instance": ((f"UPDATE statekit_timers SET instance_id = 'ghost' WHERE {A}",), ""),
    "unknown chart version": (
        (
            "UPDATE statekit_instances SET chart_version = 9, chart_digest = 'sha256:9' "
            "WHERE instance_id = 'a'",
        ),
        "version",
    ),
    "instance row damaged": (
        ("UPDATE statekit_instances SET configuration = '[' WHERE instance_id = 'a'",),
        "configuration",
    ),
    "timers column damaged": (
        ("UPDATE statekit_instances SET timers = '{\"timers\":1}' WHERE instance_id = 'a'",),
        "timers",
    ),
}


@pytest.mark.parametrize("what", sorted(CORRUPT))
def test_a_corrupt_timer_row_is_skipped_reported_and_never_fires_early(
    store_url: str, what: str
) -> None:
    runner = _filled(store_url)
    runner.create("b")  # a healthy instance whose timer must still fire (due T0 + 10003)
    runner.apply("b", "b1", "Start")
    statements, word = CORRUPT[what]
    with runner.store.write():
        for statement in statements:
            assert runner.store.execute(statement).rowcount == 1, statement
    before = {i: len(runner.store.events(i)) for i in runner.store.instance_ids()}
    fired = runner.fire_due(now_ms=T0 + 9_000)  # before any reminder is really due
    assert all(o.instance_id != "a" for o in fired), fired
    assert [len(runner.store.events(i)) for i in before] == list(before.values())
    fired = runner.fire_due(now_ms=T0 + 10_010)  # both reminders are due: only b's fits
    assert [(o.instance_id, o.status.value) for o in fired] == [("b", "APPLIED")]
    if what != "unknown instance":  # an orphan row is never claimed: verify_store names it
        assert any(word in why for why in runner.timer_problems.values()), runner.timer_problems
    assert runner.fire_due(now_ms=T0 + 10_010) == []  # nothing comes back: no crash loop
    assert len(runner.timer_problems) <= 2
    found = _differences(runner.store, runner)
    assert found, f"{what}: verify says nothing"
    runner.store.close()

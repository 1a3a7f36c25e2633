"""A migration that enters states the old version lacked (a region added, with or without
`enter:`; a region added inside one state) is a verified, replayable history entry, on
SQLite and on PostgreSQL: the new region's timers are armed due at the migration's clock
reading plus their delay (not the arming time of anything older), their rows are written
with the entry's sequence, `verify` is clean, `rebuild` gives the stored state, and the
worker delivers them when due, not before. `verify` reports every change to what the
entry recorded: its clock reading, the states it says it entered, the timer's row."""

from __future__ import annotations

from typing import Any

import pytest
from runner_charts import chart_from

from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

T0 = 1_700_000_000_000
LATER = T0 + 5_000  # when the migration runs
DAY = 86_400_000

V1 = """
statechart: sub
version: 1
events: {LAPSE: {}, PAY: {}}
initial: entitlement
states:
  entitlement:
    initial: active
    states:
      active: {on: {LAPSE: grace}}
      grace:
        on: {PAY: active}
        after: {7d: active}
"""

REGION = """
parallel: true
states:
  billing:
    initial: open
    states:
      open: {}
      dunning:
        after: [{id: retry, delay: 3d, to: open}]
  entitlement:
    initial: active"""


def _v2(migration: str = "") -> str:
    head = "version: 2\n" + (f"migrations:\n  - from: 1\n{migration}" if migration else "")
    old = "\ninitial: entitlement\nstates:\n  entitlement:\n    initial: active"
    return V1.replace("version: 1\n", head).replace(old, REGION)


INSIDE = V1.replace("version: 1\n", "version: 2\n").replace(
    "        after: {7d: active}\n",
    "        after: {7d: active}\n"
    "        parallel: true\n"
    "        states:\n"
    "          notice:\n"
    "            initial: due\n"
    "            states:\n"
    "              due: {after: [{id: remind, delay: 1d, to: sent}]}\n"
    "              sent: {}\n"
    "          hold: {initial: none, states: {none: {}}}\n",
)

# case → (version 2, events under version 1, the configuration after migrating, the
# timers armed after it: ID → due time)
CASES: dict[str, tuple[str, list[str], set[str], dict[str, int]]] = {
    "region added, entered by default": (
        _v2(),
        [],
        {"billing", "billing.open", "entitlement", "entitlement.active"},
        {},
    ),
    "region added, entered by enter:": (
        _v2("    enter: {billing: billing.dunning}\n"),
        ["LAPSE"],
        {"billing", "billing.dunning", "entitlement", "entitlement.grace"},
        {
            "after(7d)@entitlement.grace": T0 + 7 * DAY,
            "after(retry)@billing.dunning": LATER + 3 * DAY,
        },
    ),
    "region added inside a state only some instances are in": (
        INSIDE,
        ["LAPSE"],
        {
            "entitlement",
            "entitlement.grace",
            "entitlement.grace.notice",
            "entitlement.grace.notice.due",
            "entitlement.grace.hold",
            "entitlement.grace.hold.none",
        },
        {
            "after(7d)@entitlement.grace": T0 + 7 * DAY,
            "after(remind)@entitlement.grace.notice.due": LATER + DAY,
        },
    ),
    "a state gains regions; an instance not in it": (
        INSIDE,
        [],
        {"entitlement", "entitlement.active"},
        {},
    ),
}


class Clock:
    """An injected clock: epoch milliseconds, moved by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def _timer_rows(runner: Runner, instance_id: str) -> dict[str, tuple[Any, ...]]:
    return {r.timer_id: (r.due_ms, r.sequence) for r in runner.store.timers(instance_id)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_migration_that_enters_states_verifies_rebuilds_and_arms_their_timers(
    store_url: str, case: str
) -> None:
    v2_text, events, configuration, timers = CASES[case]
    clock = Clock()
    store = open_store(store_url)
    try:
        v1 = Runner(chart_from(V1), store, clock=clock)
        v1.create("i")
        for n, event in enumerate(events):
            assert v1.apply("i", f"e{n}", event).applied
        before = _timer_rows(v1, "i")
        was_in = set(v1.load("i").state.configuration)
        clock.now = LATER
        v2 = Runner(chart_from(v2_text), store, previous=[v1.chart], clock=clock)
        report = v2.migrate("i")
        assert report.status == "MIGRATED", report.reason
        loaded = v2.load("i")
        assert set(loaded.state.configuration) == configuration
        assert {t.id: t.due_ms for t in loaded.state.timers} == timers
        assert sorted(report.mapping.get("entered", [])) == sorted(configuration - was_in)
        rows = _timer_rows(v2, "i")
        assert {k: due for k, (due, _) in rows.items()} == timers
        for timer_id, (_, armed_by) in rows.items():  # new ones: armed by the entry
            assert armed_by == (before[timer_id][1] if timer_id in before else report.sequence)
        checked = v2.verify("i")
        assert checked.ok, (checked.differences, checked.snapshot_problems)
        rebuilt = v2.rebuild("i")
        assert not rebuilt.problems and rebuilt.state == loaded.state
        assert v2.migrate("i").status == "CURRENT"
        new = {k: due for k, due in timers.items() if k not in before}
        for timer_id, due in sorted(new.items(), key=lambda item: item[1]):
            assert v2.fire_due(now_ms=due - 1) == []  # never early
            (delivered,) = v2.fire_due(now_ms=due)
            assert delivered.status is OutcomeStatus.APPLIED, delivered
            assert timer_id not in _timer_rows(v2, "i")
            checked = v2.verify("i")
            assert checked.ok, (checked.differences, checked.snapshot_problems)
            assert v2.rebuild("i").state == v2.load("i").state
    finally:
        store.close()


MIGRATION_ROW = "event_id = 'statekit.migrate.v1.v2'"
RETRY_ROW = "timer_id = 'after(retry)@billing.dunning'"

# what is changed after a migration that entered a region and armed its timer → (table,
# assignment, row)
ENTRY_TAMPER: dict[str, tuple[str, str, str]] = {
    "the entry's clock reading": ("statekit_events", "clock_ms = clock_ms + 1", MIGRATION_ROW),
    "the entry's clock reading removed": ("statekit_events", "clock_ms = NULL", MIGRATION_ROW),
    "the states the entry says it entered": (
        "statekit_events",
        "payload = REPLACE(payload, '\"billing.dunning\"', '\"billing.open\"')",
        MIGRATION_ROW,
    ),
    "the armed timer's due time": ("statekit_timers", "due_ms = due_ms + 1", RETRY_ROW),
    "the armed timer's arming sequence": ("statekit_timers", "sequence = 1", RETRY_ROW),
}


class _Undo(Exception):
    pass


@pytest.mark.parametrize("what", sorted(ENTRY_TAMPER))
def test_verify_reports_every_change_to_what_entering_recorded(store_url: str, what: str) -> None:
    clock = Clock()
    store = open_store(store_url)
    try:
        v1 = Runner(chart_from(V1), store, clock=clock)
        v1.create("i")
        assert v1.apply("i", "e0", "LAPSE").applied
        clock.now = LATER
        v2_text = CASES["region added, entered by enter:"][0]
        v2 = Runner(chart_from(v2_text), store, previous=[v1.chart], clock=clock)
        assert v2.migrate("i").status == "MIGRATED"
        assert v2.verify("i").ok
        table, assignment, where = ENTRY_TAMPER[what]
        try:
            with store.write():
                cursor = store.execute(f"UPDATE {table} SET {assignment} WHERE {where}")
                assert cursor.rowcount == 1
                report = v2.verify("i")
                raise _Undo
        except _Undo:
            pass
        assert not report.ok, what
        assert v2.verify("i").ok
    finally:
        store.close()

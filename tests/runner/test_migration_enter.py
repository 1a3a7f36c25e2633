"""A migration that enters states the old version lacked (a region added, with or without
`enter:`; a region added inside one state) is a verified, replayable history entry, on
SQLite and on PostgreSQL: the new region's timers are armed due at the migration's clock
reading plus their delay (not the arming time of anything older), their rows are written
with the entry's sequence, `verify` is clean, `rebuild` gives the stored state, and the
worker delivers them when due, not before."""

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

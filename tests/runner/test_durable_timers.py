"""Durable timers in the runner, on each store: rows written and deleted with the event
that armed, cancelled or delivered them, due times from the injected clock (recorded),
`fire_due` never early and consuming rejected deliveries, undelayed sends applied
right after their event, replay/verify/rebuild/snapshots/versions carrying timers."""

from __future__ import annotations

from typing import Any, cast

import pytest
from runner_charts import COUNTER, LEASE, chart_from
from store_legacy import before_schema_5
from test_business_keys import undo_time_migration

from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.migrations import LATEST
from statekit.testing import RunnerSimulator

T0 = 1_700_000_000_000
AFTER = "after(30s)@running"
IDLE = "after(1d)@idle"


class Clock:
    """An injected clock: epoch milliseconds, moved by the test."""

    def __init__(self, now: int = T0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def lease(store_url: str, clock: Clock, **options: Any) -> Runner:
    return Runner(chart_from(LEASE), open_store(store_url), clock=clock, **options)


def rows(runner: Runner, instance: str) -> dict[str, tuple[Any, ...]]:
    """timer ID → (generation, event, payload, due, sequence) as stored."""
    return {
        r.timer_id: (r.generation, r.event, r.payload, r.due_ms, r.sequence)
        for r in runner.store.timers(instance)
    }


def armed(runner: Runner, instance: str) -> dict[str, tuple[int, int | None]]:
    """timer ID → (generation, due) of the instance's state."""
    return {t.id: (t.generation, t.due_ms) for t in runner.load(instance).state.timers}


def stored_equal_state(runner: Runner, instance: str) -> bool:
    state = armed(runner, instance)
    stored = {k: (v[0], v[3]) for k, v in rows(runner, instance).items()}
    return stored == state


def test_arming_writes_rows_with_the_event_and_the_clock_it_recorded(store_url: str) -> None:
    clock = Clock()
    r = lease(store_url, clock)
    r.create("a")
    assert rows(r, "a") == {IDLE: (1, IDLE, "{}", T0 + 86_400_000, 0)}  # armed at creation
    clock.now = T0 + 5
    assert r.apply("a", "e1", "Start").applied
    stored = rows(r, "a")
    assert set(stored) == {"reminder", AFTER}  # the idle timer went with the state
    assert stored["reminder"][1:] == ("Remind", '{"n":1}', T0 + 5 + 10_000, 1)
    assert stored[AFTER][1:] == (AFTER, "{}", T0 + 5 + 30_000, 1)
    assert stored_equal_state(r, "a")
    assert [e.clock_ms for e in r.history("a")] == [T0 + 5]
    steps = r.history("a")[0].evidence["microsteps"]
    assert {"reminder", AFTER} <= {t for m in steps for t in m.get("armed", [])}
    assert IDLE in {t for m in steps for t in m.get("cancelled", [])}
    assert r.verify("a").ok


def test_a_timer_never_fires_before_its_due_time(store_url: str) -> None:
    clock = Clock()
    r = lease(store_url, clock)
    r.create("a")
    r.apply("a", "e1", "Start")
    for early in (T0, T0 + 9_999):
        assert r.fire_due(now_ms=early) == []
    fired = r.fire_due(now_ms=T0 + 10_000)
    assert [(o.instance_id, o.status, o.version) for o in fired] == [
        ("a", OutcomeStatus.APPLIED, 2)
    ]
    assert fired[0].event_id.startswith("statekit.timer/reminder/")
    assert r.load("a").state.context["reminders"] == 1
    assert set(rows(r, "a")) == {AFTER}
    assert r.fire_due(now_ms=T0 + 29_999) == []
    clock.now = T0 + 30_000
    assert [o.status for o in r.fire_due()] == [OutcomeStatus.APPLIED]  # the clock's reading
    assert r.load("a").state.leaves == ("expired",)
    assert rows(r, "a") == {}
    history = r.history("a")
    assert [e.clock_ms for e in history] == [T0, T0 + 10_000, T0 + 30_000]
    assert [e.type for e in history] == ["Start", "Remind", AFTER]
    assert r.verify("a").ok


def test_exit_cancels_re_entry_arms_a_new_generation_and_an_id_is_replaced(
    store_url: str,
) -> None:
    clock = Clock()
    r = lease(store_url, clock)
    r.create("a")
    r.apply("a", "e1", "Start")
    first = rows(r, "a")
    clock.now = T0 + 1_000
    r.apply("a", "e2", "Beat")  # exits and re-enters running
    second = rows(r, "a")
    assert second[AFTER][0] > first[AFTER][0] and second[AFTER][3] == T0 + 31_000
    assert second["reminder"][0] > first["reminder"][0]  # re-sent: replaced, not added
    assert len(second) == 2
    clock.now = T0 + 2_000
    r.apply("a", "e3", "Snooze")  # replaces the reminder by its id
    third = rows(r, "a")
    assert third["reminder"][1:] == ("Remind", '{"n":2}', T0 + 62_000, 3)
    assert third[AFTER] == second[AFTER]
    assert stored_equal_state(r, "a")
    r.apply("a", "e4", "Finish")  # exit cancels the after timer, `cancel` the reminder
    assert rows(r, "a") == {}
    assert r.fire_due(now_ms=T0 + 10**9) == []  # nothing cancelled ever fires
    assert r.verify("a").ok


def test_cancelling_an_id_that_is_not_armed_does_nothing(store_url: str) -> None:
    r = lease(store_url, Clock())
    r.create("a")
    r.apply("a", "e1", "Start")
    assert len(r.fire_due(now_ms=T0 + 10_000)) == 1  # the reminder is delivered
    assert r.apply("a", "e2", "Finish").applied  # cancels `reminder`, armed no more
    assert rows(r, "a") == {} and r.verify("a").ok


@pytest.mark.parametrize("deadline", [5, T0 - 1, T0])
def test_a_due_time_in_the_past_fires_at_the_next_fire_due(store_url: str, deadline: int) -> None:
    clock = Clock()
    r = lease(store_url, clock)
    r.create("a")
    r.apply("a", "e1", "Deadline", {"at": deadline})
    assert rows(r, "a")["at(ctx.deadline)@pinned"][3] == deadline
    fired = r.fire_due()  # now = T0
    assert [o.status for o in fired] == [OutcomeStatus.APPLIED]
    assert r.load("a").state.leaves == ("done",) and r.verify("a").ok


def test_a_rejected_delivery_consumes_its_timer_and_replays(store_url: str) -> None:
    r = lease(store_url, Clock())
    r.create("a")
    r.apply("a", "e1", "Start")
    r.apply("a", "e2", "Hold")
    fired = r.fire_due(now_ms=T0 + 30_000)  # the reminder, then the guarded expiry
    assert [(o.status, o.reason) for o in fired] == [
        (OutcomeStatus.APPLIED, None),
        (OutcomeStatus.REJECTED, "EXPIRY_HELD"),
    ]
    assert fired[1].version == 4  # the consumption is in the history
    last = r.history("a")[-1]
    assert (last.type, last.status, last.evidence["rejected"]["reason"]) == (
        AFTER,
        "REJECTED",
        "EXPIRY_HELD",
    )
    state = r.load("a").state
    assert state.leaves == ("running",) and state.context["expired"] is False
    assert rows(r, "a") == {} and state.timers == ()
    assert r.fire_due(now_ms=T0 + 10**9) == []  # consumed: never again
    assert r.verify("a").ok
    assert r.rebuild("a").state == state


def test_undelayed_sends_are_events_of_their_own_right_after_the_sender(
    store_url: str,
) -> None:
    r = lease(store_url, Clock())
    r.create("a")
    r.apply("a", "e1", "Start")
    o = r.apply("a", "echo", "Echo", {"n": 7})
    assert (o.status, o.version) == (OutcomeStatus.APPLIED, 2)
    assert [(s.event_id, s.status.value, s.reason) for s in o.sent] == [
        ("statekit.send/echo/1", "APPLIED", None),
        ("statekit.send/echo/2", "REJECTED", "UNDEFINED_TRANSITION"),
        ("statekit.send/echo/3", "APPLIED", None),
    ]
    history = r.history("a")
    assert [(e.event_id, e.type) for e in history[1:]] == [
        ("echo", "Echo"),
        ("statekit.send/echo/1", "Noted"),
        ("statekit.send/echo/3", "Beat"),
    ]
    assert [x["event_id"] for x in r.rejections("a")] == ["statekit.send/echo/2"]
    assert r.load("a").state.context["beats"] == 1
    assert [m.message_id for m in r.store.outbox(["pending"], "a")] == ["statekit.send/echo/1/0"]
    assert o.to_data("a")["sent"][1]["reason"] == "UNDEFINED_TRANSITION"
    assert r.verify("a").ok


def test_replay_rebuild_and_snapshots_restore_the_armed_timers(store_url: str) -> None:
    clock = Clock()
    r = lease(store_url, clock, snapshot_every=2)
    r.create("a")
    for n, event in enumerate(["Start", "Beat", "Snooze"], 1):
        clock.now = T0 + 1_000 * n  # a different clock reading for every event
        r.apply("a", f"e{n}", event)
    state = r.load("a").state
    assert state.timers
    rebuilt = r.rebuild("a")
    assert rebuilt.snapshot == 2 and rebuilt.state == state
    assert rebuilt.state is not None and rebuilt.state.timers == state.timers
    snapshot = r.store.snapshots("a")[0]
    assert '"timers"' in snapshot.state
    assert r.verify("a").ok


def test_an_instance_keeps_its_chart_version_for_its_timers(store_url: str) -> None:
    v1 = chart_from(LEASE)
    v2 = chart_from(LEASE.replace("version: 1", "version: 2"))
    store = open_store(store_url)
    old = Runner(v1, store, clock=Clock())
    old.create("a")
    old.apply("a", "e1", "Start")
    new = Runner(v2, store, previous=[v1], clock=Clock())
    fired = new.fire_due(now_ms=T0 + 10_000)
    assert [o.status for o in fired] == [OutcomeStatus.APPLIED]
    assert [e.chart_version for e in new.history("a")] == [1, 1]
    assert new.verify("a").ok
    assert new.migrate("a").status == "MIGRATED"  # the armed timers move with it
    assert set(rows(new, "a")) == {AFTER}
    assert [o.status for o in new.fire_due(now_ms=T0 + 30_000)] == [OutcomeStatus.APPLIED]
    assert new.history("a")[-1].chart_version == 2 and new.verify("a").ok


def test_the_clock_must_give_integer_milliseconds(store_url: str) -> None:
    readings: list[Any] = [1.5, "now", None, 2**63, True]
    for bad in readings:

        def clock(value: Any = bad) -> int:
            return cast(int, value)  # what a wrong clock gives

        r = Runner(chart_from(LEASE), open_store(store_url), clock=clock)
        with pytest.raises((TypeError, ValueError)):
            r.create("a")
        assert r.store.instance_ids() == []


def test_a_schema_3_store_gains_timers_in_place(store_url: str) -> None:
    counter = chart_from(COUNTER)
    r = Runner(counter, open_store(store_url))
    r.create("c")
    assert r.apply("c", "e1", "Incr", {"by": 2}).applied
    before_schema_5(r.store)  # the later migrations first (6, then 5)
    with r.store.write():
        undo_time_migration(r.store)
    r.store.close()
    store = open_store(store_url)  # migrated on open
    assert store.schema_version() == LATEST == 9
    upgraded = Runner(counter, store, clock=Clock())
    assert [e.clock_ms for e in upgraded.history("c")] == [None]
    assert upgraded.verify("c").ok
    assert upgraded.apply("c", "e2", "Incr", {"by": 1}).version == 2
    assert [e.clock_ms for e in upgraded.history("c")] == [None, T0]
    timed = Runner(chart_from(LEASE), store, clock=Clock())
    timed.create("a")
    timed.apply("a", "e1", "Start")
    assert len(timed.fire_due(now_ms=T0 + 10_000)) == 1 and timed.verify("a").ok


def test_the_runner_simulator_applies_undelayed_sends_as_the_runner_does(store_url: str) -> None:
    r = lease(store_url, Clock())
    sim = RunnerSimulator(chart_from(LEASE))
    r.create("a")
    sim.create("a")
    r.apply("a", "e1", "Start")
    sim.apply("a", "e1", "Start")
    stored = r.apply("a", "echo", "Echo", {"n": 7})
    simulated = sim.apply("a", "echo", "Echo", {"n": 7})
    assert [(o.event_id, o.status, o.reason, o.version) for o in simulated.sent] == [
        (o.event_id, o.status, o.reason, o.version) for o in stored.sent
    ]
    assert [e.event_id for e in sim.history("a")] == [e.event_id for e in r.history("a")]


TICKS = """
statechart: ticks
version: 1
context:
  ticks: {type: integer, default: 0}
events:
  Tick: {n: integer}
initial: ticking
states:
  ticking:
    entry:
      - send: {event: Tick, payload: {n: 1}, delay: 100ms, id: t1}
      - send: {event: Tick, payload: {n: 2}, delay: 200ms, id: t2}
      - send: {event: Tick, payload: {n: 3}, delay: 300ms, id: t3}
    on:
      Tick: {do: [{assign: {ticks: ctx.ticks + 1}}]}
"""
# a trigger refusing the delivery of a's t2 (a row the database refuses for a reason the
# runner cannot know: the last line of defence; a repeated fact never gets there, see
# test_repeated_facts.py)
REFUSE_A_T2 = {
    "sqlite": (
        "CREATE TRIGGER refuse_a_t2 BEFORE INSERT ON statekit_events WHEN NEW.instance_id = "
        "'a' AND NEW.event_id = 'statekit.timer/t2/2' BEGIN SELECT RAISE(ABORT, 'not here'); "
        "END",
    ),
    "postgresql": (
        "CREATE FUNCTION refuse_a_t2() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'not here' USING ERRCODE = 'check_violation'; END $$",
        "CREATE TRIGGER refuse_a_t2 BEFORE INSERT ON statekit_events FOR EACH ROW WHEN "
        "(NEW.instance_id = 'a' AND NEW.event_id = 'statekit.timer/t2/2') "
        "EXECUTE FUNCTION refuse_a_t2()",
    ),
}


def test_a_delivery_the_store_refuses_is_skipped_and_the_rest_of_its_batch_fires(
    store_url: str,
) -> None:
    # (timer tN is armed at generation N) the database refuses a/t2's delivery, which
    # fails the whole batch; the batch is then redone one delivery per transaction, and
    # only that one is left (armed, reported once)
    r = Runner(chart_from(TICKS), open_store(store_url), clock=Clock())
    for instance in ("a", "b"):
        r.create(instance)
    with r.store.write():
        for statement in REFUSE_A_T2[store_url.split(":", 1)[0]]:
            r.store.execute(statement)
    fired = r.fire_due(now_ms=T0 + 1_000)
    delivered = sorted((o.instance_id, o.event_id) for o in fired)
    assert delivered == [
        (i, f"statekit.timer/t{n}/{n}")
        for i, n in [("a", 1), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    ]
    assert all(o.status is OutcomeStatus.APPLIED for o in fired)
    assert [(k[0], k[1]) for k in r.timer_problems] == [("a", "t2")]
    assert "refused its delivery: not here" in next(iter(r.timer_problems.values()))
    assert set(rows(r, "a")) == {"t2"} and rows(r, "b") == {}
    assert armed(r, "a") == {"t2": (2, T0 + 200)} and stored_equal_state(r, "a")
    assert r.load("a").state.context["ticks"] == 2 and r.load("b").state.context["ticks"] == 3
    assert [e.event_id for e in r.history("a")] == ["statekit.timer/t1/1", "statekit.timer/t3/3"]
    assert r.fire_due(now_ms=T0 + 2_000) == []  # skipped from then on
    assert len(r.timer_problems) == 1
    assert r.verify("a").ok and r.verify("b").ok

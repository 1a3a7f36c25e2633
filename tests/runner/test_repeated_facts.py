"""A timer delivery whose event repeats a fact the history holds (its idempotency key), on
each store: `fire_due` consumes the timer as a duplicate (same payload) or a business key
conflict (another payload), whether the holder is in the store or earlier in the same
transaction; the history records the consumption, and replay, `rebuild` and `verify`
agree with it; a tampered consumption is a positioned difference."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_charts import chart_from, write_chart

from statekit.runner.outcome import BUSINESS_KEY_CONFLICT, DUPLICATE_FACT, OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

T0 = 1_700_000_000_000

# tN is armed at generation N on creation, due at N * 100 ms: t2 repeats t1's fact
# (same payload), t3 repeats it with another payload, t4 reports the fact n = 2, which
# the test may record first with an event of its own
TICKS = """
statechart: keyed_ticks
version: 1
context:
  ticks: {type: integer, default: 0}
  notes: {type: string, default: ""}
events:
  Tick: {n: integer, note: string}
  Close: {}
idempotency:
  Tick: [n]
initial: ticking
states:
  ticking:
    entry:
      - send: {event: Tick, payload: {n: 1, note: "'a'"}, delay: 100ms, id: t1}
      - send: {event: Tick, payload: {n: 1, note: "'a'"}, delay: 200ms, id: t2}
      - send: {event: Tick, payload: {n: 1, note: "'b'"}, delay: 300ms, id: t3}
      - send: {event: Tick, payload: {n: 2, note: "'a'"}, delay: 400ms, id: t4}
    on:
      Tick:
        do:
          - assign: {ticks: ctx.ticks + 1, notes: ctx.notes + event.note}
          - emit: {type: Ticked, payload: {n: event.n}}
      Close: closed
  closed:
    reject: {Tick: CLOSED}
"""
T1, T2, T3, T4 = (f"statekit.timer/t{n}/{n}" for n in range(1, 5))
ALREADY, CONFLICT = OutcomeStatus.ALREADY_APPLIED, OutcomeStatus.CONFLICT
APPLIED = OutcomeStatus.APPLIED

# what the instance recorded before the timers come due → t4's (status, reason, holder)
BEFORE: dict[str, tuple[dict[str, Any] | None, tuple[OutcomeStatus, str | None, str | None]]] = {
    "nothing": (None, (APPLIED, None, None)),
    "the same fact": ({"n": 2, "note": "a"}, (ALREADY, DUPLICATE_FACT, "e1")),
    "the fact with another payload": (
        {"n": 2, "note": "z"},
        (CONFLICT, BUSINESS_KEY_CONFLICT, "e1"),
    ),
}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def _started(url: str, before: dict[str, Any] | None) -> Runner:
    """Instance `a` with its four timers armed, `before` recorded (as event e1) if given,
    and a snapshot after it (so that `rebuild` finds the holder before the snapshot)."""
    r = Runner(chart_from(TICKS), open_store(url), clock=Clock())
    r.create("a")
    if before is not None:
        assert r.apply("a", "e1", "Tick", before).applied
    r.snapshot("a")
    return r


def _fire(r: Runner, together: bool) -> list[Any]:
    """The four deliveries: in one `fire_due` (one transaction) or one by one."""
    if together:
        return r.fire_due(now_ms=T0 + 1_000)
    return [o for n in range(1, 5) for o in r.fire_due(now_ms=T0 + 100 * n)]


@pytest.mark.parametrize("together", [True, False], ids=["one transaction", "one by one"])
@pytest.mark.parametrize("before", sorted(BEFORE))
def test_a_delivery_repeating_a_recorded_fact_consumes_its_timer(
    store_url: str, before: str, together: bool
) -> None:
    recorded, t4 = BEFORE[before]
    r = _started(store_url, recorded)
    base = 0 if recorded is None else 1  # the version before the deliveries
    fired = _fire(r, together)
    t1_at = base + 1
    expected = [
        (T1, APPLIED, None, None),
        (T2, ALREADY, DUPLICATE_FACT, T1),
        (T3, CONFLICT, BUSINESS_KEY_CONFLICT, T1),
        (T4, t4[0], t4[1], t4[2]),
    ]
    assert [(o.event_id, o.status, o.first_event_id) for o in fired] == [
        (e, s, h) for e, s, _, h in expected
    ]
    assert [o.version for o in fired] == [base + n for n in range(1, 5)]  # each recorded
    assert r.timer_problems == {} and r.store.timers("a") == []
    for o, (_, status, reason, holder) in zip(fired, expected, strict=True):
        if holder is None:
            continue
        at = t1_at if holder == T1 else 1
        said = f"was recorded by event {holder!r} at sequence {at}"
        assert said in (o.message or "") and (o.message or "").endswith("the timer is consumed")
        if status is ALREADY:  # as a duplicate by key: no reason, the holder's place
            assert (o.duplicate, o.reason, o.sequence, o.conflict) == (True, None, at, None)
        else:
            assert (o.reason, o.duplicate, o.conflict and o.conflict.to_data()) == (
                BUSINESS_KEY_CONFLICT, False,
                {"reason": reason, "expected_version": None, "version": o.version - 1,
                 "event_id": holder, "sequence": at},
            )  # fmt: skip
        assert o.result is None and o.emitted == () and o.sent == ()
    history = {e.event_id: e for e in r.history("a")}
    assert [e.sequence for e in history.values()] == list(range(1, base + 5))
    for o, (event_id, status, reason, _) in zip(fired, expected, strict=True):
        row = history[event_id]
        if status is APPLIED:
            assert (row.status, row.idempotency_key) == ("APPLIED", json.dumps([row.payload["n"]]))
            continue
        assert (row.status, row.idempotency_key, row.type) == ("REJECTED", None, "Tick")
        assert row.evidence == {
            "microsteps": [],
            "rejected": {"reason": reason, "message": o.message},
        }
    applied = [o for o in fired if o.status is APPLIED]
    state = r.load("a").state
    assert state.timers == () and state.context["ticks"] == base + len(applied)
    assert state.context["notes"] == ("" if recorded is None else recorded["note"]) + "a" * len(
        applied
    )
    assert len(r.store.outbox(["pending"], "a")) == base + len(applied)  # nothing else emitted
    assert r.rejections("a") == []  # recorded in the history, not audited
    report = r.verify("a")
    assert report.ok, report.differences
    rebuilt = r.rebuild("a")
    assert rebuilt.snapshot == base and rebuilt.problems == () and rebuilt.state == state
    assert r.fire_due(now_ms=T0 + 10**6) == []


def test_an_event_repeating_a_consumed_delivery_is_not_a_duplicate_of_it(store_url: str) -> None:
    # a consumption records no fact: the fact's holder stays the first event
    r = _started(store_url, {"n": 2, "note": "a"})
    _fire(r, together=True)
    o = r.apply("a", "e2", "Tick", {"n": 1, "note": "a"})
    assert (o.status, o.first_event_id, o.sequence) == (ALREADY, T1, 2)


def test_a_delivery_the_chart_rejects_stays_its_rejection_though_its_fact_is_held(
    store_url: str,
) -> None:
    # only a delivery the chart accepts would record its fact (as before keys were looked
    # at for deliveries: such rows verify as they always did)
    r = _started(store_url, {"n": 2, "note": "a"})
    assert r.apply("a", "e2", "Close").applied
    fired = r.fire_due(now_ms=T0 + 1_000)
    assert [(o.status, o.reason, o.first_event_id) for o in fired] == [
        (OutcomeStatus.REJECTED, "CLOSED", None)
    ] * 4
    assert r.history("a")[-1].evidence["rejected"]["reason"] == "CLOSED"
    assert r.verify("a").ok and r.rebuild("a").state == r.load("a").state


# name → (what the instance records before its timers come due, as in BEFORE; statements
# altering t4's delivery or the fact's holder): verify must name t4's delivery
TAMPER: dict[str, tuple[dict[str, Any] | None, tuple[str, ...]]] = {
    "a consumption naming a holder that does not exist": (
        {"n": 2, "note": "a"},
        (
            f"UPDATE statekit_events SET evidence = REPLACE(evidence, '''e1''', '''e9''') "
            f"WHERE event_id = '{T4}'",
        ),
    ),
    "a duplicate claimed as a conflict": (
        {"n": 2, "note": "a"},
        (
            f"UPDATE statekit_events SET evidence = REPLACE(evidence, '{DUPLICATE_FACT}', "
            f"'{BUSINESS_KEY_CONFLICT}') WHERE event_id = '{T4}'",
        ),
    ),
    "the holder renamed": (
        {"n": 2, "note": "a"},
        ("UPDATE statekit_events SET event_id = 'e9' WHERE event_id = 'e1'",),
    ),
    "a consumption recorded as applied": (
        {"n": 2, "note": "a"},
        (f"UPDATE statekit_events SET status = NULL WHERE event_id = '{T4}'",),
    ),
    "an applied delivery recorded as consumed with no holder": (
        None,
        (
            "UPDATE statekit_events SET status = 'REJECTED', idempotency_key = NULL, evidence = "
            """'[2,[],{"rejected":{"message":"this Tick (key [2]) was recorded by event ''e1'' """
            """at sequence 1; the timer is consumed","reason":"DUPLICATE_FACT"}}]' """
            f"WHERE event_id = '{T4}'",
        ),
    ),
}


class _Rollback(Exception):
    pass


@pytest.mark.parametrize("what", sorted(TAMPER))
def test_a_tampered_consumption_is_a_positioned_difference(store_url: str, what: str) -> None:
    recorded, statements = TAMPER[what]
    r = _started(store_url, recorded)
    _fire(r, together=True)
    at = r.history("a")[-1].sequence  # t4's delivery, the last event
    assert r.verify("a").ok
    found: tuple[str, ...] = ()
    with pytest.raises(_Rollback), r.store.write():
        for statement in statements:
            assert r.store.execute(statement).rowcount == 1, statement
        found = r.verify("a").differences
        raise _Rollback
    assert any(d.startswith(f"event #{at} ({T4}") for d in found), found
    assert r.verify("a").ok  # rolled back


def test_the_worker_consumes_a_repeated_fact_and_reports_it_as_an_outcome(
    store_url: str, tmp_path: Path
) -> None:
    r = Runner(chart_from(TICKS), open_store(store_url), clock=lambda: 1_000_000)
    r.create("a")
    r.apply("a", "e1", "Tick", {"n": 2, "note": "z"})
    chart = str(write_chart(TICKS, tmp_path, "keyed_ticks"))
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "worker", "--db", store_url, "--chart", chart,
         "--once"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "skipped" not in done.stderr, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(x["event_id"], x["status"], x["reason"], x.get("first_event_id")) for x in lines] == [
        (T1, "APPLIED", None, None),
        (T2, "ALREADY_APPLIED", None, T1),
        (T3, "CONFLICT", BUSINESS_KEY_CONFLICT, T1),
        (T4, "CONFLICT", BUSINESS_KEY_CONFLICT, "e1"),
    ]
    assert r.store.timers() == [] and r.verify("a").ok

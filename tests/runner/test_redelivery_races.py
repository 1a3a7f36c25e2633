"""A redelivery racing the transaction that records its event, every interleaving forced.

Transaction A records an event and is held (`Store.hold`, `hold_points`) at one
point of its write transaction (its instance locked and read, its decision made,
its rows written before the COMMIT) while one or seven other runners, each on its
own connection and thread, send the same event ID (same payload, or another) or
the same fact under another event ID (a business key). Only once every one of them
waits for A (PostgreSQL: its backend waits on a lock, or it has finished, as a
timer worker that skips the locked instance does; SQLite: it has reached the BEGIN
of its write transaction, which the write lock A holds serialises after A's
COMMIT) is A released. Every redelivery must then be answered from the record
A committed: ALREADY_APPLIED at A's sequence, or the payload's CONFLICT, never
decided again by the chart (a REJECTED on the state A left), never a database
error, never a history entry or audit row more than the same calls made one after
the other write.

Entry points: `apply` (an event the chart would reject on A's state, one it would
accept again, one sending an undelayed event, a fact with a business key, and
`apply` from a runner that holds the row in its cache, deciding without reading),
`apply_batch`, `apply_many` and `fire_due` (a timer two workers deliver).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from runner_charts import chart_from

from statekit.runner.outcome import (
    BUSINESS_KEY_CONFLICT,
    EVENT_ID_PAYLOAD_CONFLICT,
    Outcome,
    OutcomeStatus,
)
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.hold_points import BEGIN, COMMIT, DECIDED, LOCKED
from statekit.runner.transaction import Command

RACE = """
statechart: race
version: 1
description: Events a redelivery decided again on the state they left would answer otherwise.
context:
  n: {type: integer, default: 0}
  paid: {type: integer, default: 0}
events:
  Start: {by: string}
  Bump: {by: integer}
  Fan: {by: integer}
  Noted: {}
  Pay: {ref: string, amount: integer}
idempotency:
  Pay: [ref]
initial: idle
states:
  idle:
    after:
      1s: rung
    on:
      Start: running
  rung:
    on:
      Start: running
  running:
    reject: {Start: ALREADY_RUNNING}
    on:
      Bump: {do: [{assign: {n: ctx.n + event.by}}]}
      Fan: {do: [{send: {event: Noted}}]}
      Noted: {do: [{assign: {n: ctx.n + 1}}]}
      Pay: {do: [{assign: {paid: ctx.paid + event.amount}}]}
"""

T0 = 1_800_000_000_000  # every runner's clock: the timer armed at creation is due at T0 + 1s
WAIT = 30.0  # how long a forced step may take before the test fails (never slept)
INSTANCE = "race-1"


@dataclass(frozen=True)
class Kind:
    """One entry point: the event A sends and the others redeliver (`other`: with
    another payload), how it is sent, and whether the instance starts running."""

    name: str
    type: str
    payload: dict[str, Any]
    other: dict[str, Any]
    send: str = "apply"  # apply, apply_batch, apply_many, fire_due
    running: bool = True
    key: bool = False  # the others send the same fact under event IDs of their own
    cached: bool = False  # the others hold the row in their cache (decide unread)


KINDS = [
    Kind("apply-rejected-again", "Start", {"by": "a"}, {"by": "b"}, running=False),
    Kind("apply-accepted-again", "Bump", {"by": 1}, {"by": 2}),
    Kind("apply-cached", "Bump", {"by": 1}, {"by": 2}, cached=True),
    Kind("apply-sends", "Fan", {"by": 1}, {"by": 2}),
    Kind(
        "apply-business-key",
        "Pay",
        {"ref": "r1", "amount": 5},
        {"ref": "r1", "amount": 6},
        key=True,
    ),
    Kind("apply_batch", "Start", {"by": "a"}, {"by": "b"}, send="apply_batch", running=False),
    Kind("apply_many", "Bump", {"by": 1}, {"by": 2}, send="apply_many"),
    Kind("fire_due", "", {}, {}, send="fire_due", running=False),
]
POINTS = [LOCKED, DECIDED, COMMIT]


class HoldAt:
    """A hold that stops its transaction the first time it reaches `point`, until
    `release` is set."""

    def __init__(self, point: str) -> None:
        self.point = point
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, point: str) -> None:
        if point == self.point and not self.reached.is_set():
            self.reached.set()
            if not self.release.wait(WAIT):
                raise AssertionError(f"transaction A was held at {point!r} for {WAIT} s")


class Arrival:
    """A hold that notes that its transaction reached BEGIN (holding nothing)."""

    def __init__(self) -> None:
        self.begun = threading.Event()

    def __call__(self, point: str) -> None:
        if point == BEGIN:
            self.begun.set()


def _runner(url: str) -> Runner:
    return Runner(chart_from(RACE), open_store(url), clock=lambda: T0)


def _send(runner: Runner, kind: Kind, event_id: str, payload: dict[str, Any]) -> list[Any]:
    """The kind's call, its outcomes (or the exceptions `apply_many` reports) as a list."""
    if kind.send == "fire_due":
        return list(runner.fire_due(now_ms=T0 + 5_000))
    if kind.send == "apply_batch":
        return list(runner.apply_batch(INSTANCE, [Command(event_id, kind.type, payload)]))
    if kind.send == "apply_many":
        return list(runner.apply_many([(INSTANCE, Command(event_id, kind.type, payload))]))
    return [runner.apply(INSTANCE, event_id, kind.type, payload)]


def _lock_waiters(url: str) -> Callable[[], int]:
    """How many other backends of the database wait on a lock (PostgreSQL)."""
    monitor = psycopg.connect(url, autocommit=True)

    def count() -> int:
        row = monitor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        ).fetchone()
        return int(row[0]) if row else 0

    count.close = monitor.close  # type: ignore[attr-defined]
    return count


def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait for an observable state (a lock wait the server reports, a thread ended):
    polled, failing after `WAIT` s."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.002)


@pytest.fixture(params=["sqlite", "postgresql"])
def race_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'race.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


# a timer delivery has one payload: its kind races with the same payload only
CASES = [
    pytest.param(kind, same, id=f"{kind.name}-{'same' if same else 'other'}-payload")
    for kind in KINDS
    for same in (True, False)
    if same or kind.send != "fire_due"
]


@pytest.mark.parametrize("writers", [2, 8])
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize(("kind", "same"), CASES)
def test_a_redelivery_racing_the_commit_is_answered_from_the_record(
    race_url: str, kind: Kind, point: str, same: bool, writers: int
) -> None:
    runners = [_runner(race_url) for _ in range(writers + 1)]
    try:
        _race(runners, kind, point, same)
    finally:
        for r in runners:
            r.store.close()


def _race(runners: list[Runner], kind: Kind, point: str, same: bool) -> None:
    """`setup` creates the instance, `a` sends first, the `others` redeliver."""
    setup, a, *others = runners
    setup.create(INSTANCE)
    if kind.running:
        setup.apply(INSTANCE, "prep", "Start", {"by": "setup"})
    if kind.cached:
        for r in others:
            r.load(INSTANCE)  # the row in its cache: `apply` decides without reading
    hold = HoldAt(point)
    a.store.hold = hold
    arrivals = [Arrival() for _ in others]
    for r, arrival in zip(others, arrivals, strict=True):
        r.store.hold = arrival
    first: list[Any] = []
    answers: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def run_a() -> None:
        try:
            first.extend(_send(a, kind, "e1", kind.payload))
        except BaseException as exc:  # reported below
            errors.append(exc)
            hold.reached.set()

    def run_other(n: int) -> None:
        event_id = f"e-other-{n}" if kind.key else "e1"
        try:
            answers[n] = _send(others[n], kind, event_id, kind.payload if same else kind.other)
        except BaseException as exc:  # the bug this family catches: a database error
            errors.append(exc)

    thread_a = threading.Thread(target=run_a)
    thread_a.start()
    assert hold.reached.wait(WAIT), f"transaction A never reached {point!r}"
    assert not errors, errors
    threads = [threading.Thread(target=run_other, args=(n,)) for n in range(len(others))]
    for t in threads:
        t.start()
    if a.store.dialect == "postgresql":
        waiting = _lock_waiters(a.store.url)
        try:
            _until(
                lambda: waiting() + sum(not t.is_alive() for t in threads) >= len(threads),
                "every other writer waits for A's lock (or has finished)",
            )
        finally:
            waiting.close()  # type: ignore[attr-defined]
    else:
        for arrival in arrivals:
            assert arrival.begun.wait(WAIT), "another writer never began its transaction"
    hold.release.set()
    thread_a.join(WAIT)
    for t in threads:
        t.join(WAIT)
    assert not any(t.is_alive() for t in [thread_a, *threads])
    assert not errors, errors
    _check(kind, same, setup, first, [answers[n] for n in range(len(others))], others)


def _check(
    kind: Kind,
    same: bool,
    runner: Runner,
    first: list[Any],
    answers: list[list[Any]],
    others: list[Runner],
) -> None:
    applied = [o for o in first if isinstance(o, Outcome)]
    assert len(applied) == len(first) == 1, first
    won = applied[0]
    assert won.status is OutcomeStatus.APPLIED, won
    history = runner.history(INSTANCE)
    audits = runner.rejections(INSTANCE)
    report = runner.verify(INSTANCE)
    assert report.ok, report.to_data()
    for r in others:
        assert not r.timer_problems, r.timer_problems
    expected_events = (1 if kind.running else 0) + 1 + (1 if kind.type == "Fan" else 0)
    assert len(history) == expected_events, [(e.event_id, e.type) for e in history]
    assert runner.load(INSTANCE).version == max(o.version for o in (won, *won.sent))
    if kind.send == "fire_due":  # the others found the timer gone, or skipped the instance
        assert all(a == [] or all(o.duplicate for o in a) for a in answers), answers
        assert audits == []
        return
    for answer in answers:
        assert len(answer) == 1 and isinstance(answer[0], Outcome), answer
        o = answer[0]
        assert o.sent == ()
        if same:
            assert o.status is OutcomeStatus.ALREADY_APPLIED, o.to_data()
            assert o.sequence == won.sequence and o.duplicate, o.to_data()
            if kind.key:
                assert o.first_event_id == "e1"
        else:
            reason = BUSINESS_KEY_CONFLICT if kind.key else EVENT_ID_PAYLOAD_CONFLICT
            assert o.status is OutcomeStatus.CONFLICT and o.reason == reason, o.to_data()
            assert o.conflict is not None and o.conflict.sequence == won.sequence
    # audited as the same calls one after the other audit them: a conflict, or a repeated
    # fact under another event ID; never a rejection
    audited = len(answers) if (kind.key or not same) else 0
    assert len(audits) == audited, audits
    assert all(a["status"] != OutcomeStatus.REJECTED.value for a in audits), audits


@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_the_answer_holds_whatever_the_server_default_isolation(
    pg_url: str, isolation: str
) -> None:
    """The runner's write transactions name READ COMMITTED, so a database whose default
    is stricter neither fails the redelivery (a serialization error) nor changes it."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {conn.info.dbname} SET default_transaction_isolation = "
                     f"'{isolation}'")  # fmt: skip
    test_a_redelivery_racing_the_commit_is_answered_from_the_record(
        pg_url, KINDS[0], LOCKED, True, 2
    )

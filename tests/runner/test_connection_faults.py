"""A runner's connection lost at every point of its write path, on a real PostgreSQL.

Each entry point (`apply` deciding on a row read or on its cached row, an `apply`
the chart rejects, `apply_batch`, `apply_many`, `fire_due`, `create`) runs with a
hold (`Store.hold`, `hold_points`) that, the first time its transaction reaches the
point, ends the runner's backend from another connection (`pg_terminate_backend`)
and waits until the server reports it gone. Points: BEGIN, LOCKED (the rows locked
and read), DECIDED, COMMIT (written, COMMIT not sent: it then goes out on a dead
connection, the outcome unknown to the runner, and it did not commit),
COMMITTED-UNSEEN (the hold commits the transaction itself on the runner's
connection before ending it: the commit landed and the runner never saw its answer),
and BETWEEN (the idle connection ended between two calls). Then every call must
answer as if nothing had happened (APPLIED at the right sequence for an event whose
commit landed, never ALREADY_APPLIED for its own event), nothing doubled (history,
audit rows, outbox rows, timer rows), nothing lost, `verify` clean.

Also the server itself restarted (fast and immediate shutdown) in the middle of a
call, the server away while the runner waits for it, and the server away for longer
than `retry_for`: a `StoreUnavailableError` that says what to do.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from runner_charts import chart_from

from statekit.runner.errors import StoreUnavailableError
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.hold_points import BEGIN, COMMIT, DECIDED, LOCKED
from statekit.runner.transaction import Command
from statekit.testing.postgres_server import ThrowawayPostgres

CHART = """
statechart: heal
version: 1
description: Events with every kind of row a transaction writes.
context:
  n: {type: integer, default: 0}
events:
  Start: {}
  Bump: {by: integer}
initial: idle
states:
  idle:
    after:
      1s: running
    on:
      Start: running
  running:
    reject: {Start: ALREADY_RUNNING}
    on:
      Bump: {do: [{assign: {n: ctx.n + event.by}}, {emit: {type: Bumped, payload: {n: ctx.n}}}]}
"""

T0 = 1_800_000_000_000
WAIT = 30.0
UNSEEN = "committed-unseen"
BETWEEN = "between-calls"


@dataclass(frozen=True)
class Entry:
    """An entry point and the hold points its write transaction reaches."""

    name: str
    points: tuple[str, ...]


ENTRIES = [
    Entry("apply-read", (BEGIN, LOCKED, DECIDED, COMMIT, UNSEEN, BETWEEN)),
    Entry("apply-cached", (BEGIN, DECIDED, COMMIT, UNSEEN, BETWEEN)),
    Entry("apply-rejected", (BEGIN, LOCKED, DECIDED, COMMIT, UNSEEN, BETWEEN)),
    Entry("apply_batch", (BEGIN, LOCKED, DECIDED, COMMIT, UNSEEN, BETWEEN)),
    Entry("apply_many", (BEGIN, LOCKED, DECIDED, COMMIT, UNSEEN, BETWEEN)),
    Entry("fire_due", (BEGIN, LOCKED, DECIDED, COMMIT, UNSEEN, BETWEEN)),
    Entry("create", (BEGIN, COMMIT, UNSEEN, BETWEEN)),
]
CASES = [
    pytest.param(entry, point, id=f"{entry.name}-{point}")
    for entry in ENTRIES
    for point in entry.points
]


def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait for a state the server reports (polled, failing after `WAIT` s)."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.002)


class Killer:
    """Ends a backend from another connection and waits until it is gone."""

    def __init__(self, url: str) -> None:
        self.admin = psycopg.connect(url, autocommit=True)

    def kill(self, pid: int) -> None:
        self.admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        _until(
            lambda: (
                self.admin.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)
                ).fetchone()
                == (0,)
            ),
            f"backend {pid} is gone",
        )


class KillAt:
    """A hold that ends the runner's backend the first time its transaction reaches
    `point` (UNSEEN: at COMMIT, after committing on the runner's own connection)."""

    def __init__(self, runner: Runner, killer: Killer, point: str) -> None:
        self.runner, self.killer, self.point = runner, killer, point
        self.fired = False

    def __call__(self, point: str) -> None:
        wanted = COMMIT if self.point == UNSEEN else self.point
        if point != wanted or self.fired:
            return
        self.fired = True
        connection = self.runner.store.connection
        if self.point == UNSEEN:
            connection.execute("COMMIT")  # it lands; the runner never hears of it
        self.killer.kill(connection.info.backend_pid)


@pytest.fixture
def killer(pg_url: str) -> Iterator[Killer]:
    k = Killer(pg_url)
    yield k
    k.admin.close()


def _runner(url: str) -> Runner:
    return Runner(chart_from(CHART), open_store(url), clock=lambda: T0)


def _call(entry: Entry, runner: Runner, n: int) -> list[Any]:
    """The entry point's call number `n` (1 or 2), its answers as a list."""
    event = f"e{n}"
    if entry.name in ("apply-read", "apply-cached"):
        return [runner.apply("i1", event, "Bump", {"by": n})]
    if entry.name == "apply-rejected":
        return [runner.apply("i1", event, "Start", {})]
    if entry.name == "apply_batch":
        commands = [Command(f"{event}{x}", "Bump", {"by": n}) for x in "ab"]
        return runner.apply_batch("i1", commands)
    if entry.name == "apply_many":
        return runner.apply_many([(i, Command(event, "Bump", {"by": n})) for i in ("i1", "i2")])
    if entry.name == "fire_due":
        return runner.fire_due(now_ms=T0 + 1000 * (n + 1) * 10)
    return [runner.create(f"c{n}")]


def _prepare(entry: Entry, url: str) -> None:
    """The instances the entry point writes to, made by another runner."""
    setup = _runner(url)
    try:
        if entry.name == "create":
            return
        for instance in ("i1", "i2"):
            setup.create(instance)
            if entry.name != "fire_due":
                setup.apply(instance, "start", "Start", {})
        if entry.name == "fire_due":  # a second timer on i2, due later than i1's
            setup.fire_due(now_ms=T0 - 1)
    finally:
        setup.store.close()


@pytest.mark.parametrize(("entry", "point"), CASES)
def test_a_lost_connection_at_every_point_of_every_entry(
    pg_url: str, killer: Killer, entry: Entry, point: str
) -> None:
    _prepare(entry, pg_url)
    runner = _runner(pg_url)
    try:
        if entry.name == "apply-cached":
            runner.load("i1")  # the row in its cache: `apply` decides without reading
        first_hold = KillAt(runner, killer, point)
        if point == BETWEEN:
            answers = [_call(entry, runner, 1)]
            killer.kill(runner.store.connection.info.backend_pid)
            answers.append(_call(entry, runner, 2))
        else:
            runner.store.hold = first_hold
            answers = [_call(entry, runner, 1)]
            assert first_hold.fired, f"the transaction never reached {point!r}"
            runner.store.hold = None
            answers.append(_call(entry, runner, 2))  # and the runner goes on
    finally:
        runner.store.close()
    _check(entry, pg_url, answers)


def _check(entry: Entry, url: str, answers: list[list[Any]]) -> None:
    """Each call answered as if nothing had happened, and the store as two calls leave it."""
    checker = _runner(url)
    store = checker.store
    try:
        if entry.name == "create":
            assert [[a.version for a in call] for call in answers] == [[0], [0]]
            assert [r.instance_id for r in store.instance_charts()] == ["c1", "c2"]
        elif entry.name == "apply-rejected":
            for call in answers:
                assert [a.status for a in call] == [OutcomeStatus.REJECTED]
            assert len(store.rejections("i1")) == 2  # one audit row per call, none doubled
        elif entry.name == "fire_due":
            first, second = answers
            assert [(a.status, a.instance_id, a.sequence) for a in first] == [
                (OutcomeStatus.APPLIED, "i1", 1),
                (OutcomeStatus.APPLIED, "i2", 1),
            ]
            assert second == []  # nothing left due: each timer fired once
            assert store.timers() == []
        elif entry.name == "apply_many":
            for n, call in enumerate(answers, start=1):
                applied = [(OutcomeStatus.APPLIED, n + 1)] * 2
                assert [(a.status, a.sequence) for a in call] == applied
        elif entry.name == "apply_batch":
            sequences = [[(a.status, a.sequence) for a in call] for call in answers]
            assert sequences == [
                [(OutcomeStatus.APPLIED, 2), (OutcomeStatus.APPLIED, 3)],
                [(OutcomeStatus.APPLIED, 4), (OutcomeStatus.APPLIED, 5)],
            ]
        else:
            sequences = [[(a.status, a.sequence) for a in call] for call in answers]
            assert sequences == [[(OutcomeStatus.APPLIED, 2)], [(OutcomeStatus.APPLIED, 3)]]
        for row in store.instance_charts():
            report = checker.verify(row.instance_id)
            assert report.ok, report
            history = checker.history(row.instance_id)
            assert len({e.event_id for e in history}) == len(history)
            # one outbox message per Bump in the history: none doubled, none lost
            bumps = sum(e.type == "Bump" for e in history)
            assert len(store.outbox(["pending"], row.instance_id)) == bumps
    finally:
        store.close()


RESTART_ENTRIES = [e for e in ENTRIES if e.name in ("apply-read", "apply_many", "fire_due")]


class RestartAt:
    """A hold that restarts the whole server (`mode`) the first time its transaction
    reaches DECIDED."""

    def __init__(self, server: ThrowawayPostgres, mode: str) -> None:
        self.server, self.mode, self.fired = server, mode, False

    def __call__(self, point: str) -> None:
        if point == DECIDED and not self.fired:
            self.fired = True
            self.server.restart(self.mode)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
@pytest.mark.parametrize("entry", RESTART_ENTRIES, ids=lambda e: e.name)
def test_a_server_restarted_in_the_middle_of_a_call(
    restartable_server: ThrowawayPostgres, restartable_url: str, entry: Entry, mode: str
) -> None:
    pg_server, pg_url = restartable_server, restartable_url
    _prepare(entry, pg_url)
    runner = _runner(pg_url)
    try:
        hold = RestartAt(pg_server, mode)
        runner.store.hold = hold
        answers = [_call(entry, runner, 1)]
        assert hold.fired
        runner.store.hold = None
        answers.append(_call(entry, runner, 2))
    finally:
        runner.store.close()
    _check(entry, pg_url, answers)


class HaltAt:
    """A hold that stops the server at DECIDED and, once the runner has tried to reach it
    again (its attempt seen on the server's port), starts it again (`resume`), or
    leaves it stopped (`resume` False)."""

    def __init__(self, server: ThrowawayPostgres, *, resume: bool, at: str = DECIDED) -> None:
        self.server, self.resume, self.fired, self.at = server, resume, False, at
        self.thread: threading.Thread | None = None

    def __call__(self, point: str) -> None:
        if point != self.at or self.fired:
            return
        self.fired = True
        self.server.halt("fast")
        if not self.resume:
            return
        listener = socket.create_server(("127.0.0.1", self.server.port))

        def come_back() -> None:
            with listener:
                refused, _ = listener.accept()  # the runner is trying to reconnect
                refused.close()
            self.server.resume()

        self.thread = threading.Thread(target=come_back)
        self.thread.start()


def test_a_runner_waits_for_a_server_that_comes_back(
    restartable_server: ThrowawayPostgres, restartable_url: str
) -> None:
    pg_server, pg_url = restartable_server, restartable_url
    entry = ENTRIES[0]
    _prepare(entry, pg_url)
    runner = _runner(pg_url + "?retry_for=120")
    hold = HaltAt(pg_server, resume=True)
    try:
        runner.store.hold = hold
        answers = [_call(entry, runner, 1)]
        runner.store.hold = None
        answers.append(_call(entry, runner, 2))
    finally:
        if hold.thread is not None:
            hold.thread.join()
        runner.store.close()
    _check(entry, pg_url, answers)


@pytest.mark.parametrize("at", [DECIDED, COMMIT])
def test_a_server_away_for_longer_than_retry_for_is_a_statekit_error(
    restartable_server: ThrowawayPostgres, restartable_url: str, at: str
) -> None:
    pg_server, pg_url = restartable_server, restartable_url
    entry = ENTRIES[0]
    _prepare(entry, pg_url)
    url = pg_url.replace("postgres@", "postgres:s3cret@") + "?retry_for=0.5"
    runner = _runner(url)
    hold = HaltAt(pg_server, resume=False, at=at)
    runner.store.hold = hold
    try:
        with pytest.raises(StoreUnavailableError) as caught:
            _call(entry, runner, 1)
    finally:
        pg_server.resume()
    message = str(caught.value)
    assert "s3cret" not in message
    assert pg_url.split("/")[2].replace("postgres@", "") in message
    assert "?retry_for=SECONDS" in message
    # stopped with the COMMIT on its way: its outcome is unknown, and the message says so
    assert ("commit took effect is unknown" in message) == (at == COMMIT)
    runner.store.hold = None
    answers = [_call(entry, runner, 1), _call(entry, runner, 2)]  # it heals once back
    runner.store.close()
    _check(entry, pg_url, answers)

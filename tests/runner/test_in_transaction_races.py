"""Two applications' transactions racing on one instance through `Runner.in_transaction` on
PostgreSQL: under READ COMMITTED the second waits on the row lock and decides on what the
first committed (VERSION_CONFLICT with an expected version, else applied after it);
under REPEATABLE READ and SERIALIZABLE the second's transaction cannot lock a row
changed after its snapshot, and the serialization failure comes back as a retryable
`TransactionAbortedError`, never a psycopg exception. Never a torn history.

The interleaving is forced, not slept for: the first transaction holds the row lock
(its apply returned, its commit not sent) until the server shows the second one
waiting for that lock (`pg_locks`), and only then commits.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from runner_charts import COUNTER, chart_from

from statekit.runner.errors import TransactionAbortedError
from statekit.runner.outcome import Outcome, OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

LOCK_WAIT_LIMIT = 30.0
"""Seconds the test waits for the server to show the second transaction waiting (it shows
it within milliseconds; the limit only ends a broken run)."""


def _wait_until_waiting_for_a_lock(url: str, pid: int) -> None:
    """Return once the backend `pid` waits for a lock (read from the server)."""
    deadline = time.monotonic() + LOCK_WAIT_LIMIT
    with psycopg.connect(url, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            row = watcher.execute(
                "SELECT 1 FROM pg_locks WHERE pid = %s AND NOT granted", (pid,)
            ).fetchone()
            if row is not None:
                return
            time.sleep(0.005)  # a poll of what the server shows, not a wait that hopes
    raise AssertionError(f"backend {pid} never waited for the row lock")


@pytest.mark.parametrize("expected", [0, None], ids=["expected-version", "unconditional"])
def test_read_committed_callers_queue_on_the_row_lock(pg_url: str, expected: int | None) -> None:
    runner = Runner(chart_from(COUNTER), open_store(pg_url))
    runner.create("c1")
    first = psycopg.connect(pg_url)
    second = psycopg.connect(pg_url)
    with runner.in_transaction(first) as tx:
        won = tx.apply("c1", "e1", "Incr", {"by": 1}, expected_version=expected)
    answers: list[Outcome | BaseException] = []

    def race() -> None:
        try:
            with runner.in_transaction(second) as other:
                answers.append(
                    other.apply("c1", "e2", "Incr", {"by": 10}, expected_version=expected)
                )
            second.commit()
        except BaseException as exc:
            answers.append(exc)

    thread = threading.Thread(target=race)
    thread.start()
    _wait_until_waiting_for_a_lock(pg_url, second.info.backend_pid)
    first.commit()
    thread.join(timeout=LOCK_WAIT_LIMIT)
    [lost] = answers
    assert isinstance(lost, Outcome), lost
    assert won.version == 1
    if expected is None:  # serialised: applied on the version the first committed
        assert (lost.status, lost.version) == (OutcomeStatus.APPLIED, 2)
        assert [e.event_id for e in runner.history("c1")] == ["e1", "e2"]
    else:
        assert (lost.status, lost.reason, lost.version) == (
            OutcomeStatus.CONFLICT, "VERSION_CONFLICT", 1
        )  # fmt: skip
        assert [e.event_id for e in runner.history("c1")] == ["e1"]
    assert runner.verify("c1").ok
    first.close()
    second.close()


@pytest.mark.parametrize(
    "level",
    [psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE],
    ids=["repeatable-read", "serializable"],
)
def test_a_serialization_failure_is_a_retryable_statekit_error(
    pg_url: str, level: psycopg.IsolationLevel
) -> None:
    runner = Runner(chart_from(COUNTER), open_store(pg_url))
    runner.create("c1")
    app = psycopg.connect(pg_url)
    app.isolation_level = level
    app.execute("SELECT 1").fetchone()  # the transaction's snapshot is taken
    runner.apply("c1", "elsewhere", "Incr", {"by": 1})  # committed after that snapshot
    with runner.in_transaction(app) as tx, pytest.raises(TransactionAbortedError) as caught:
        tx.apply("c1", "e1", "Incr", {"by": 1})
    assert caught.value.retryable
    assert "run the whole transaction again" in str(caught.value)
    app.rollback()
    for _attempt in range(2):  # run again, as the error says: a new snapshot
        with runner.in_transaction(app) as tx:
            outcome = tx.apply("c1", "e1", "Incr", {"by": 1})
        app.commit()
    assert (outcome.status, outcome.version) == (OutcomeStatus.ALREADY_APPLIED, 2)
    assert [e.event_id for e in runner.history("c1")] == ["elsewhere", "e1"]
    app.close()


def test_a_lost_connection_is_a_statekit_error(pg_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(pg_url))
    runner.create("c1")
    app = psycopg.connect(pg_url)
    app.execute("SELECT 1").fetchone()
    with psycopg.connect(pg_url, autocommit=True) as admin:  # the server ends the session
        admin.execute("SELECT pg_terminate_backend(%s)", (app.info.backend_pid,))
    with pytest.raises(TransactionAbortedError) as caught, runner.in_transaction(app) as tx:
        tx.apply("c1", "e1", "Incr", {"by": 1})
    assert caught.value.retryable
    assert "terminating connection" in str(caught.value)
    app.close()
    inside = psycopg.connect(pg_url)  # lost between the block's checks and its call
    with runner.in_transaction(inside) as tx:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (inside.info.backend_pid,))
        with pytest.raises(TransactionAbortedError, match="terminating connection"):
            tx.apply("c1", "e1", "Incr", {"by": 1})
    assert runner.load("c1").version == 0
    inside.close()

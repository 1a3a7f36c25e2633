"""`Runner.in_transaction`: statekit's rows in the application's transaction, for every
kind of connection on each store it works on (sqlite3, psycopg, SQLAlchemy Core and ORM).

Commit → both, rollback or an exception → neither, a duplicate → ALREADY_APPLIED with no
second row, a call that fails → none of its rows, the runner's remembered rows never
taken from a rolled-back transaction, and every connection it cannot write on refused
with a statekit error before anything is written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from app_connections import POSTGRES_KINDS, SQLITE_KINDS, App, orders
from runner_charts import COUNTER, LEASE, chart_from
from sqlalchemy import create_engine

from statekit.runner.errors import (
    NoStoreError,
    NotInTransactionError,
    StoreBusyError,
    StoreMismatchError,
    TransactionAbortedError,
    UnknownInstanceError,
    UnsupportedConnectionError,
)
from statekit.runner.outcome import Outcome, OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.hold_points import COMMIT
from statekit.runner.transaction import Command

CASES = [*((k, "sqlite") for k in SQLITE_KINDS), *((k, "postgresql") for k in POSTGRES_KINDS)]


@pytest.fixture(params=CASES, ids=[f"{k}-{s}" for k, s in CASES])
def case(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Runner, App]]:
    """A runner over a fresh store and an application connection of one kind to it."""
    kind, store = request.param
    url = (
        f"sqlite:///{tmp_path / 'app.db'}"
        if store == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    runner = Runner(chart_from(COUNTER), open_store(url))
    app = App(kind, url)
    yield runner, app
    app.close()
    runner.store.close()


def _rows(runner: Runner, table: str, instance_id: str) -> int:
    row = runner.store.execute(
        f"SELECT COUNT(*) FROM {table} WHERE instance_id = ?", (instance_id,)
    ).fetchone()
    return int(row[0])


def test_a_commit_keeps_the_order_and_the_event_together(case: tuple[Runner, App]) -> None:
    runner, app = case
    app.begin()
    app.insert_order("o1")
    with runner.in_transaction(app.conn) as tx:
        tx.create("c1")
        first = tx.apply("c1", "e1", "Incr", {"by": 2}, expected_version=0)
        [batch] = tx.apply_batch("c1", [Command("e2", "Incr", {"by": 3})])
        tx.create("c2")
        many = tx.apply_many(
            [("c1", Command("e3", "Incr", {"by": 4})), ("c2", Command("e4", "Incr", {"by": 5}))]
        )
        assert tx.load("c1").version == 3  # the transaction sees its own writes
    app.commit()
    assert (first.status, first.version, batch.version) == (OutcomeStatus.APPLIED, 1, 2)
    assert [item.version if isinstance(item, Outcome) else item for item in many] == [3, 1]
    assert orders(app.url) == {"o1"}
    assert runner.load("c1").state.context["total"] == 9
    assert [e.event_id for e in runner.history("c1")] == ["e1", "e2", "e3"]
    assert _rows(runner, "statekit_outbox", "c1") == 3
    assert runner.load("c2").version == 1


def test_a_rollback_leaves_neither(case: tuple[Runner, App]) -> None:
    runner, app = case
    app.begin()
    app.insert_order("o1")
    with runner.in_transaction(app.conn) as tx:
        tx.create("c1")
        tx.apply("c1", "e1", "Incr", {"by": 2})
    app.rollback()
    assert orders(app.url) == set()
    with pytest.raises(UnknownInstanceError):
        runner.load("c1")
    for table in ("statekit_events", "statekit_outbox"):
        assert _rows(runner, table, "c1") == 0


def test_an_exception_in_the_block_leaves_neither(case: tuple[Runner, App]) -> None:
    runner, app = case
    runner.create("c1")
    app.begin()
    app.insert_order("o1")
    with (
        pytest.raises(RuntimeError, match="the application failed"),
        runner.in_transaction(app.conn) as tx,
    ):
        tx.apply("c1", "e1", "Incr", {"by": 2})
        raise RuntimeError("the application failed")
    app.rollback()
    assert orders(app.url) == set()
    assert runner.load("c1").version == 0
    assert _rows(runner, "statekit_outbox", "c1") == 0


def test_a_duplicate_in_the_transaction_is_already_applied(case: tuple[Runner, App]) -> None:
    runner, app = case
    runner.create("c1")
    app.begin()
    with runner.in_transaction(app.conn) as tx:
        first = tx.apply("c1", "e1", "Incr", {"by": 2})
        again = tx.apply("c1", "e1", "Incr", {"by": 2})
    app.commit()
    assert (first.status, again.status) == (OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED)
    assert again.sequence == 1
    assert _rows(runner, "statekit_events", "c1") == 1
    assert _rows(runner, "statekit_outbox", "c1") == 1
    # and sent again later, by the runner itself: the same answer, nothing doubled
    assert runner.apply("c1", "e1", "Incr", {"by": 2}).status == OutcomeStatus.ALREADY_APPLIED
    assert _rows(runner, "statekit_events", "c1") == 1


def test_a_call_that_fails_leaves_none_of_its_rows(case: tuple[Runner, App]) -> None:
    runner, app = case
    runner.create("c1")
    app.begin()
    app.insert_order("o1")

    def fail_before_release(point: str) -> None:
        if point == COMMIT:
            raise RuntimeError("failed with its rows written")

    with runner.in_transaction(app.conn) as tx:
        tx.apply("c1", "e1", "Incr", {"by": 1})
        tx.store.hold = fail_before_release
        with pytest.raises(RuntimeError, match="with its rows written"):
            tx.apply("c1", "e2", "Incr", {"by": 5})
        tx.store.hold = None
        again = tx.apply("c1", "e3", "Incr", {"by": 7})  # decided on the row as stored
    app.commit()
    assert orders(app.url) == {"o1"}
    assert [e.event_id for e in runner.history("c1")] == ["e1", "e3"]
    assert (again.version, runner.load("c1").state.context["total"]) == (2, 8)
    assert _rows(runner, "statekit_outbox", "c1") == 2


def test_the_runner_never_remembers_a_rolled_back_row(case: tuple[Runner, App]) -> None:
    runner, app = case
    runner.create("c1")
    runner.apply("c1", "r1", "Incr", {"by": 1})  # remembered: the next apply reads nothing
    app.begin()
    with runner.in_transaction(app.conn) as tx:
        tx.apply("c1", "t1", "Incr", {"by": 10})
    app.rollback()
    after_rollback = runner.apply("c1", "r2", "Incr", {"by": 1}, expected_version=1)
    app.begin()
    with runner.in_transaction(app.conn) as tx:
        tx.apply("c1", "t2", "Incr", {"by": 100})
    app.commit()
    after_commit = runner.apply("c1", "r3", "Incr", {"by": 1}, expected_version=3)
    assert (after_rollback.status, after_rollback.version) == (OutcomeStatus.APPLIED, 2)
    assert (after_commit.status, after_commit.version) == (OutcomeStatus.APPLIED, 4)
    assert runner.load("c1").state.context["total"] == 103
    assert runner.verify("c1").ok


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "rollback"])
def test_timers_are_armed_and_fired_in_the_transaction(
    case: tuple[Runner, App], commit: bool
) -> None:
    runner, app = case
    now = 1_000_000
    timed = Runner(chart_from(LEASE), runner.store, clock=lambda: now)
    app.begin()
    with timed.in_transaction(app.conn) as tx:
        tx.create("l1")
        tx.apply("l1", "s1", "Start", {})
        fired = tx.fire_due(now_ms=now + 60_000)
    app.commit() if commit else app.rollback()
    assert sorted(o.status.value for o in fired) == ["APPLIED", "APPLIED"]
    if commit:
        assert "expired" in timed.load("l1").state.configuration
        assert timed.fire_due(now_ms=now + 60_000) == []  # consumed with the transaction
    else:
        with pytest.raises(UnknownInstanceError):
            timed.load("l1")


def test_a_connection_in_autocommit_is_refused(tmp_path: Path, pg_url: str) -> None:
    for url in (f"sqlite:///{tmp_path / 'a.db'}", pg_url):
        runner = Runner(chart_from(COUNTER), open_store(url))
        runner.create("c1")
        conn: sqlite3.Connection | psycopg.Connection[tuple[object, ...]] = (
            sqlite3.connect(url[len("sqlite:///") :], isolation_level=None)
            if url.startswith("sqlite")
            else psycopg.connect(url, autocommit=True)
        )
        with (
            pytest.raises(NotInTransactionError, match="would commit on their own"),
            runner.in_transaction(conn) as tx,
        ):
            tx.apply("c1", "e1", "Incr", {"by": 1})
        assert runner.load("c1").version == 0
        conn.close()


def test_a_failed_postgres_transaction_is_refused(pg_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(pg_url))
    runner.create("c1")
    with psycopg.connect(pg_url) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 1 / 0")
        with (
            pytest.raises(NotInTransactionError, match="failed earlier"),
            runner.in_transaction(conn),
        ):
            pass


def test_what_is_not_a_connection_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    runner = Runner(chart_from(COUNTER), open_store(url))
    engine = create_engine(url)
    for thing in ("sqlite:///a.db", engine, object()):
        with pytest.raises(UnsupportedConnectionError), runner.in_transaction(thing):
            pass
    engine.dispose()


def test_another_database_is_refused(tmp_path: Path) -> None:
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{tmp_path / 'a.db'}"))
    bare = sqlite3.connect(tmp_path / "bare.db")
    with pytest.raises(NoStoreError, match="no statekit tables"), runner.in_transaction(bare):
        pass
    open_store(f"sqlite:///{tmp_path / 'other.db'}").close()  # statekit's tables, no chart
    other = sqlite3.connect(tmp_path / "other.db")
    with (
        pytest.raises(StoreMismatchError, match="must be to the runner's database"),
        runner.in_transaction(other),
    ):
        pass


def test_the_block_cannot_be_used_once_ended(tmp_path: Path) -> None:
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{tmp_path / 'a.db'}"))
    conn = sqlite3.connect(tmp_path / "a.db")
    with runner.in_transaction(conn) as tx:
        tx.create("c1")
    conn.commit()
    with pytest.raises(NotInTransactionError, match="its block has ended"):
        tx.apply("c1", "e1", "Incr", {"by": 1})
    assert runner.load("c1").version == 0


def test_a_deferred_sqlite_transaction_that_cannot_write_is_retryable(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{path}"))
    runner.create("c1")
    app = sqlite3.connect(path, isolation_level=None, timeout=5)
    app.execute("BEGIN")  # deferred
    app.execute("SELECT COUNT(*) FROM statekit_instances").fetchone()  # its snapshot
    runner.apply("c1", "elsewhere", "Incr", {"by": 1})  # another connection commits
    with (
        pytest.raises(TransactionAbortedError, match="BEGIN IMMEDIATE") as caught,
        runner.in_transaction(app) as tx,
    ):
        tx.apply("c1", "e1", "Incr", {"by": 1})
    assert caught.value.retryable
    app.execute("ROLLBACK")
    app.execute("BEGIN IMMEDIATE")  # run again, as the message says
    with runner.in_transaction(app) as tx:
        assert tx.apply("c1", "e1", "Incr", {"by": 1}).version == 2
    app.execute("COMMIT")
    assert runner.load("c1").version == 2


def test_a_deferred_sqlite_transaction_that_has_read_nothing_waits_for_the_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.db"
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{path}"))
    runner.create("c1")
    app = sqlite3.connect(path, isolation_level=None, timeout=5)
    other = Runner(chart_from(COUNTER), open_store(f"sqlite:///{path}?busy_timeout=0.05"))
    app.execute("BEGIN")  # deferred, nothing read: the block takes the lock before reading
    with runner.in_transaction(app) as tx:
        with pytest.raises(StoreBusyError):  # so no other writer can commit in between
            other.apply("c1", "elsewhere", "Incr", {"by": 1})
        assert tx.apply("c1", "e1", "Incr", {"by": 1}).version == 1
    app.execute("COMMIT")
    assert runner.load("c1").version == 1


def test_a_dict_row_factory_is_no_matter(tmp_path: Path, pg_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(pg_url))
    with psycopg.connect(pg_url, row_factory=psycopg.rows.dict_row) as conn:
        with runner.in_transaction(conn) as tx:
            tx.create("c1")
            assert tx.apply("c1", "e1", "Incr", {"by": 1}).version == 1
            assert tx.history("c1")[0].event_id == "e1"
        conn.commit()
    lite = Runner(chart_from(COUNTER), open_store(f"sqlite:///{tmp_path / 'a.db'}"))
    conn2 = sqlite3.connect(tmp_path / "a.db")
    conn2.row_factory = lambda cursor, row: {"row": row}
    with lite.in_transaction(conn2) as tx:
        tx.create("c1")
        assert tx.apply("c1", "e1", "Incr", {"by": 1}).version == 1
    conn2.commit()
    assert lite.load("c1").version == 1

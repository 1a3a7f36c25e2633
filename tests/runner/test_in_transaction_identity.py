"""`Runner.in_transaction` writes only into the runner's own database: a connection to
another database that holds the same chart (another file, another PostgreSQL database,
the other engine) is refused with `StoreMismatchError` before anything is written, and
the same database reached another way is accepted. Also: a closed connection, nested
blocks on one connection, and what an exception leaving a block leaves to the
application's commit or rollback (docs/transactions.md).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from runner_charts import COUNTER, LEASE, chart_from

from statekit.runner.errors import NotInTransactionError, StoreMismatchError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres


def _instances(url: str) -> int:
    with open_store(url) as store:
        return int(store.execute("SELECT COUNT(*) FROM statekit_instances").fetchone()[0])


def _connect(url: str) -> Any:
    """The application's connection to `url`, in a transaction."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        return conn
    return psycopg.connect(url)  # not autocommit: its first statement begins a transaction


@pytest.fixture(params=["sqlite-sqlite", "postgresql-postgresql", "postgresql-sqlite",
                        "sqlite-postgresql"])  # fmt: skip
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The runner's store and another one holding the same chart: (runner's, other's)."""
    kinds = request.param.split("-")
    urls = []
    for number, kind in enumerate(kinds):
        if kind == "sqlite":
            urls.append(f"sqlite:///{tmp_path / f'store{number}.db'}")
        else:
            urls.append(request.getfixturevalue("pg_url") if number == 0 else _second_pg(request))
    return urls[0], urls[1]


def _second_pg(request: pytest.FixtureRequest) -> str:
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    return server.create_database(f"statekit_other_{os.getpid()}_{id(request)}")


def test_another_database_with_the_same_chart_is_refused_before_any_write(
    two_stores: tuple[str, str],
) -> None:
    own, other = two_stores
    runner = Runner(chart_from(COUNTER), open_store(own))
    Runner(chart_from(COUNTER), open_store(other)).store.close()  # the chart registered there
    conn = _connect(other)
    with (
        pytest.raises(StoreMismatchError, match="must be to the runner's database"),
        runner.in_transaction(conn) as tx,
    ):
        tx.create("c1")
    conn.commit()
    conn.close()
    assert (_instances(own), _instances(other)) == (0, 0)
    runner.store.close()


def test_the_same_sqlite_file_by_another_path_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    os.symlink(tmp_path / "data", tmp_path / "link")
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{tmp_path / 'data' / 'a.db'}"))
    conn = _connect(f"sqlite:///{tmp_path / 'link' / '..' / 'link' / 'a.db'}")
    with runner.in_transaction(conn) as tx:
        tx.create("c1")
    conn.commit()
    assert runner.load("c1").version == 0


def test_the_same_postgresql_database_by_another_address_is_accepted(pg_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(pg_url))
    assert "@127.0.0.1:" in pg_url
    conn = psycopg.connect(pg_url.replace("@127.0.0.1:", "@localhost:"))  # another address
    for number in range(2):  # the second block: the identity known for this connection
        with runner.in_transaction(conn) as tx:
            tx.create(f"c{number}")
    conn.commit()
    assert [runner.load(f"c{n}").version for n in range(2)] == [0, 0]


def test_a_closed_connection_is_refused_with_a_statekit_error(tmp_path: Path, pg_url: str) -> None:
    for url in (f"sqlite:///{tmp_path / 'a.db'}", pg_url):
        runner = Runner(chart_from(COUNTER), open_store(url))
        conn = _connect(url)
        conn.close()
        with pytest.raises(NotInTransactionError, match="closed"), runner.in_transaction(conn):
            pass
        runner.store.close()


def test_nested_blocks_on_one_connection_commit_and_roll_back_together(store_url: str) -> None:
    counter = Runner(chart_from(COUNTER), open_store(store_url))
    lease = Runner(chart_from(LEASE), open_store(store_url))
    for ending in ("rollback", "commit"):
        conn = _connect(store_url)
        with counter.in_transaction(conn) as outer, lease.in_transaction(conn) as inner:
            outer.create("c1", exist_ok=True)
            inner.create("l1", exist_ok=True)
            with counter.in_transaction(conn) as again:  # the same runner, nested
                again.apply("c1", f"e-{ending}", "Incr", {"by": 1})
            assert outer.load("c1").version == 1
        getattr(conn, ending)()
        conn.close()
    assert (counter.load("c1").version, lease.load("l1").version) == (1, 0)
    assert [e.event_id for e in counter.history("c1")] == ["e-commit"]


def test_an_exception_leaving_the_block_leaves_its_rows_to_the_application(
    store_url: str,
) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    for ending in ("rollback", "commit"):
        conn = _connect(store_url)
        with pytest.raises(ZeroDivisionError), runner.in_transaction(conn) as tx:
            tx.create(f"c-{ending}")
            raise ZeroDivisionError
        getattr(conn, ending)()  # the application's: only its rollback discards them
        conn.close()
    assert _instances(store_url) == 1
    assert runner.load("c-commit").version == 0


def test_a_connection_is_checked_once_then_only_written_on(tmp_path: Path) -> None:
    """The identity, schema and chart checks of a block's entry are asked of a connection
    once: the second block on it reads neither `statekit_charts` nor the schema version
    (traced with sqlite3's own statement callback)."""
    url = f"sqlite:///{tmp_path / 'a.db'}"
    runner = Runner(chart_from(COUNTER), open_store(url))
    conn = _connect(url)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    for number in range(2):
        statements.clear()
        with runner.in_transaction(conn) as tx:
            tx.create(f"c{number}")
        checks = [s for s in statements if "statekit_charts" in s or "SELECT version" in s]
        assert bool(checks) == (number == 0), statements
    conn.commit()
    assert [runner.load(f"c{n}").version for n in range(2)] == [0, 0]

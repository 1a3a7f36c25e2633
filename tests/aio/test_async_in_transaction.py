"""`AsyncRunner.in_transaction`: statekit's rows commit and roll back with the
application's own, on a psycopg `AsyncConnection` and on aiosqlite."""

from __future__ import annotations

import asyncio
import sqlite3
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg
import pytest
from runner_charts import COUNTER, chart_from

from statekit.aio import AsyncRunner
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.store import open_store

Execute = Callable[[str, tuple[Any, ...]], Awaitable[None]]
AppTransaction = Callable[[], AbstractAsyncContextManager[tuple[Any, Execute]]]


def app_transaction(url: str) -> AppTransaction:
    """The application's own transaction on its own async connection: (connection, a way
    to run its statements written with `?`); committed when the block ends, rolled
    back on an exception."""

    @asynccontextmanager
    async def postgres() -> AsyncIterator[tuple[Any, Execute]]:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:

            async def execute(sql: str, params: tuple[Any, ...]) -> None:
                await conn.execute(sql.replace("?", "%s"), params)

            async with conn.transaction():
                yield conn, execute

    @asynccontextmanager
    async def sqlite() -> AsyncIterator[tuple[Any, Execute]]:
        path = url.removeprefix("sqlite:///")
        async with aiosqlite.connect(path, isolation_level=None, check_same_thread=False) as conn:

            async def execute(sql: str, params: tuple[Any, ...]) -> None:
                await conn.execute(sql, params)

            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn, execute
            except BaseException:
                await conn.rollback()
                raise
            await conn.commit()

    return sqlite if url.startswith("sqlite") else postgres


def app_rows(url: str) -> list[tuple[Any, ...]]:
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return list(conn.execute("SELECT id, note FROM app_rows ORDER BY id"))
    with psycopg.connect(url) as pg:
        return [tuple(r) for r in pg.execute("SELECT id, note FROM app_rows ORDER BY id")]


@pytest.fixture
def url(store_url: str) -> str:
    with open_store(store_url) as store, store.write():
        store.execute("CREATE TABLE app_rows (id INTEGER PRIMARY KEY, note TEXT)")
    return store_url


def test_committed_together_and_rolled_back_together(url: str) -> None:
    transaction = app_transaction(url)

    async def main() -> tuple[list[str], OutcomeStatus]:
        async with await AsyncRunner.open(chart_from(COUNTER), url) as runner:
            await runner.create("a")
            async with transaction() as (conn, execute):
                await execute("INSERT INTO app_rows VALUES (?, ?)", (1, "with e1"))
                async with runner.in_transaction(conn) as tx:
                    outcome = await tx.apply("a", "e1", "Incr", {"by": 1})
                    assert [e.event_id for e in await tx.history("a")] == ["e1"]
            with pytest.raises(KeyError):
                async with transaction() as (conn, execute):
                    await execute("INSERT INTO app_rows VALUES (?, ?)", (2, "with e2"))
                    async with runner.in_transaction(conn) as tx:
                        await tx.apply("a", "e2", "Incr", {"by": 1})
                    raise KeyError("the application changed its mind")
            return [e.event_id for e in await runner.history("a")], outcome.status

    history, status = asyncio.run(main())
    assert status is OutcomeStatus.APPLIED
    assert history == ["e1"]
    assert app_rows(url) == [(1, "with e1")]


def test_a_failed_call_leaves_the_transaction_to_the_application(url: str) -> None:
    """A call that raises (an unknown instance) writes nothing; the application's own row
    and the other calls still commit when it commits."""
    transaction = app_transaction(url)

    async def main() -> list[str]:
        async with await AsyncRunner.open(chart_from(COUNTER), url, connections=2) as runner:
            await runner.create("a")
            async with transaction() as (conn, execute):
                await execute("INSERT INTO app_rows VALUES (?, ?)", (1, "kept"))
                async with runner.in_transaction(conn) as tx:
                    with pytest.raises(UnknownInstanceError):
                        await tx.apply("nobody", "e1", "Incr", {"by": 1})
                    await tx.create("b")
                    await tx.apply("b", "e1", "Incr", {"by": 2})
            return [e.event_id for e in await runner.history("b")]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the view over the async connection warns of nothing
        assert asyncio.run(main()) == ["e1"]
    assert app_rows(url) == [(1, "kept")]


def sqlalchemy_url(url: str) -> tuple[str, dict[str, Any]]:
    """The async SQLAlchemy URL of a store's URL, and its `connect_args`."""
    if url.startswith("sqlite"):  # the runner's thread writes on the connection
        return url.replace("sqlite://", "sqlite+aiosqlite://", 1), {"check_same_thread": False}
    return url.replace("postgresql://", "postgresql+psycopg://", 1), {}


@pytest.mark.parametrize("kind", ["AsyncConnection", "AsyncSession"])
def test_sqlalchemy_async_connection_and_session(url: str, kind: str) -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    engine_url, connect_args = sqlalchemy_url(url)

    async def write(runner: AsyncRunner, n: int, *, commit: bool) -> None:
        engine = create_async_engine(engine_url, connect_args=connect_args)
        try:
            async with engine.connect() as conn:
                session = AsyncSession(bind=conn) if kind == "AsyncSession" else None
                owner: Any = conn if session is None else session
                await owner.execute(text(f"INSERT INTO app_rows VALUES ({n}, 'row {n}')"))
                async with runner.in_transaction(owner) as tx:
                    await tx.apply("a", f"e{n}", "Incr", {"by": n})
                await (owner.commit() if commit else owner.rollback())
                if session is not None:
                    await session.close()
        finally:
            await engine.dispose()

    async def main() -> list[str]:
        async with await AsyncRunner.open(chart_from(COUNTER), url) as runner:
            await runner.create("a")
            await write(runner, 1, commit=True)
            await write(runner, 2, commit=False)
            return [e.event_id for e in await runner.history("a")]

    assert asyncio.run(main()) == ["e1"]
    assert app_rows(url) == [(1, "row 1")]


def test_a_call_waiting_for_a_row_lock_does_not_stop_the_lock_holder(pg_url: str) -> None:
    """Two requests' transactions on one instance (PostgreSQL): B's call waits for the row
    lock A's transaction holds; A's next call and its commit still run, then B's call
    goes on with the version A committed (each block has a thread of its own)."""
    with open_store(pg_url) as store, store.write():
        store.execute("CREATE TABLE app_rows (id INTEGER PRIMARY KEY, note TEXT)")

    async def waiting_for_a_lock(conn: psycopg.AsyncConnection[Any]) -> bool:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        )
        row = await cursor.fetchone()
        return row is not None and row[0] > 0

    async def main() -> tuple[list[str], list[int]]:
        async with await AsyncRunner.open(chart_from(COUNTER), pg_url) as runner:
            await runner.create("a")
            a_locked, b_waits = asyncio.Event(), asyncio.Event()
            versions: list[int] = []

            async def request_a() -> None:
                async with (
                    await psycopg.AsyncConnection.connect(pg_url) as conn,
                    conn.transaction(),
                    runner.in_transaction(conn) as tx,
                ):
                    await tx.apply("a", "a1", "Incr", {"by": 1})  # holds a's row lock
                    a_locked.set()
                    await b_waits.wait()
                    versions.append((await tx.apply("a", "a2", "Incr", {"by": 1})).version)

            async def request_b() -> None:
                await a_locked.wait()
                async with (
                    await psycopg.AsyncConnection.connect(pg_url) as conn,
                    conn.transaction(),
                    runner.in_transaction(conn) as tx,
                ):
                    versions.append((await tx.apply("a", "b1", "Incr", {"by": 1})).version)

            async def watch() -> None:  # B is blocked on the lock: let A go on
                await a_locked.wait()
                async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as c:
                    while not await waiting_for_a_lock(c):
                        await asyncio.sleep(0.01)
                b_waits.set()

            await asyncio.wait_for(asyncio.gather(request_a(), request_b(), watch()), 60)
            return [e.event_id for e in await runner.history("a")], versions

    history, versions = asyncio.run(main())
    assert history == ["a1", "a2", "b1"]
    assert versions == [2, 3]


def test_a_request_cancelled_in_a_call_waits_for_it_before_rolling_back(pg_url: str) -> None:
    """B's call waits for A's row lock when B's task is cancelled (a client gone, a
    timeout): B's cancellation ends only once the call and the block's end have run (on
    the block's one thread, in order), so B's rollback never meets a statement still
    running on its connection; nothing of B is stored."""
    with open_store(pg_url) as store, store.write():
        store.execute("CREATE TABLE app_rows (id INTEGER PRIMARY KEY, note TEXT)")

    async def main() -> list[str]:
        async with await AsyncRunner.open(chart_from(COUNTER), pg_url) as runner:
            await runner.create("a")
            a_locked, a_commit = asyncio.Event(), asyncio.Event()

            async def request_a() -> None:
                async with (
                    await psycopg.AsyncConnection.connect(pg_url) as conn,
                    conn.transaction(),
                    runner.in_transaction(conn) as tx,
                ):
                    await tx.apply("a", "a1", "Incr", {"by": 1})
                    a_locked.set()
                    await a_commit.wait()

            async def request_b() -> None:
                async with (
                    await psycopg.AsyncConnection.connect(pg_url) as conn,
                    conn.transaction(),
                ):
                    await conn.execute("INSERT INTO app_rows VALUES (2, 'b')")
                    async with runner.in_transaction(conn) as tx:
                        await tx.apply("a", "b1", "Incr", {"by": 1})

            a = asyncio.ensure_future(request_a())
            await a_locked.wait()
            b = asyncio.ensure_future(request_b())
            async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as watch:
                while True:  # B's call is waiting for the lock
                    cursor = await watch.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    )
                    row = await cursor.fetchone()
                    if row is not None and row[0] > 0:
                        break
                    await asyncio.sleep(0.01)
            b.cancel()
            await asyncio.sleep(0)
            assert not b.done()  # still waiting for its call
            a_commit.set()
            await a
            with pytest.raises(asyncio.CancelledError):
                await b
            return [e.event_id for e in await runner.history("a")]

    assert asyncio.run(main()) == ["a1"]
    assert app_rows(pg_url) == []


def test_an_autocommit_async_connection_outside_a_transaction_is_refused(pg_url: str) -> None:
    """Its statements would each commit on their own (or, begun by the block, never):
    `NotInTransactionError`, and nothing written."""
    from statekit.runner.errors import NotInTransactionError

    async def main() -> list[str]:
        async with await AsyncRunner.open(chart_from(COUNTER), pg_url) as runner:
            await runner.create("a")
            async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
                with pytest.raises(NotInTransactionError):
                    async with runner.in_transaction(conn) as tx:
                        await tx.apply("a", "e1", "Incr", {"by": 1})
                async with conn.transaction(), runner.in_transaction(conn) as tx:
                    await tx.apply("a", "e2", "Incr", {"by": 1})  # inside one: fine
            return [e.event_id for e in await runner.history("a")]

    assert asyncio.run(main()) == ["e2"]


def test_an_aiosqlite_connection_bound_to_its_thread_is_refused_with_the_fix(
    tmp_path: Path,
) -> None:
    from statekit.runner.errors import UnsupportedConnectionError

    url = f"sqlite:///{tmp_path / 'shop.db'}"

    async def main() -> str:
        async with await AsyncRunner.open(chart_from(COUNTER), url) as runner:
            await runner.create("a")
            async with aiosqlite.connect(str(tmp_path / "shop.db")) as conn:  # the default
                with pytest.raises(UnsupportedConnectionError) as refused:
                    async with runner.in_transaction(conn) as tx:
                        await tx.apply("a", "e1", "Incr", {"by": 1})
            assert await runner.history("a") == []
            return str(refused.value)

    assert "check_same_thread=False" in asyncio.run(main())

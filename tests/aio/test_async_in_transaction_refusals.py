"""`AsyncRunner.in_transaction` refuses, with what to do instead: a connection to another
database holding the same chart (`StoreMismatchError`, nothing written), a sync
connection (it names the sync block), an autocommit psycopg `AsyncConnection` outside
a transaction (it names `async with conn.transaction():`) and a closed connection."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg
import pytest
from runner_charts import COUNTER, chart_from

from statekit.aio import AsyncRunner
from statekit.runner.errors import (
    NotInTransactionError,
    StoreMismatchError,
    UnknownInstanceError,
    UnsupportedConnectionError,
)
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres


async def _refusal(url: str, conn: Any) -> tuple[type[BaseException], str]:
    """What the block on `conn` raises, the runner's store at `url`; nothing written."""
    async with await AsyncRunner.open(chart_from(COUNTER), url) as runner:
        with pytest.raises(Exception) as refused:
            async with runner.in_transaction(conn) as tx:
                await tx.create("a")
        with pytest.raises(UnknownInstanceError):
            await runner.load("a")
    return type(refused.value), str(refused.value)


def test_another_database_with_the_same_chart_is_refused(
    tmp_path: Path, pg_server: ThrowawayPostgres
) -> None:
    for own, other in (
        (f"sqlite:///{tmp_path / 'own.db'}", f"sqlite:///{tmp_path / 'other.db'}"),
        (pg_server.create_database("aio_own"), pg_server.create_database("aio_other")),
    ):
        Runner(chart_from(COUNTER), open_store(other)).store.close()  # the chart there

        async def main(own: str = own, other: str = other) -> tuple[type[BaseException], str]:
            if other.startswith("sqlite"):
                path = other.removeprefix("sqlite:///")
                async with aiosqlite.connect(path, check_same_thread=False) as conn:
                    return await _refusal(own, conn)
            async with await psycopg.AsyncConnection.connect(other) as conn:
                return await _refusal(own, conn)

        kind, words = asyncio.run(main())
        assert kind is StoreMismatchError and "must be to the runner's database" in words
        with open_store(other) as store:
            assert store.execute("SELECT COUNT(*) FROM statekit_instances").fetchone()[0] == 0


def test_sync_connections_are_refused_naming_the_sync_block(tmp_path: Path, pg_url: str) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'own.db'}"
    for url, conn in (
        (sqlite_url, sqlite3.connect(tmp_path / "own.db")),
        (pg_url, psycopg.connect(pg_url)),
    ):
        kind, words = asyncio.run(_refusal(url, conn))
        assert kind is UnsupportedConnectionError and "use Runner.in_transaction" in words
        conn.close()


def test_an_autocommit_async_connection_is_told_the_async_form(pg_url: str) -> None:
    async def main() -> tuple[type[BaseException], str]:
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            return await _refusal(pg_url, conn)

    kind, words = asyncio.run(main())
    assert kind is NotInTransactionError and "`async with conn.transaction():`" in words


def test_a_closed_connection_is_refused_with_a_statekit_error(tmp_path: Path, pg_url: str) -> None:
    async def closed_aiosqlite() -> Any:
        conn = aiosqlite.connect(str(tmp_path / "own.db"), check_same_thread=False)
        await conn
        await conn.close()
        return conn

    async def closed_psycopg() -> Any:
        conn = await psycopg.AsyncConnection.connect(pg_url)
        await conn.close()
        return conn

    for url, make in ((f"sqlite:///{tmp_path / 'own.db'}", closed_aiosqlite),
                      (pg_url, closed_psycopg)):  # fmt: skip

        async def main(url: str = url, make: Any = make) -> tuple[type[BaseException], str]:
            return await _refusal(url, await make())

        kind, words = asyncio.run(main())
        assert issubclass(kind, NotInTransactionError | UnsupportedConnectionError), words
        assert "closed" in words

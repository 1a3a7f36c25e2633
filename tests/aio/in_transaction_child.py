"""A process that writes an application row and an order event in one transaction through
`AsyncRunner.in_transaction`, and is killed (SIGKILL, by itself) at the point named on
its command line: `python in_transaction_child.py URL POINT`."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
import psycopg
from runner_charts import COUNTER, chart_from

from statekit.aio import AsyncRunner

POINTS = ("after-app-write", "after-statekit-write", "after-commit")


def die_at(point: str, here: str) -> None:
    if point == here:
        os.kill(os.getpid(), signal.SIGKILL)


@asynccontextmanager
async def app_transaction(url: str) -> AsyncIterator[tuple[Any, str]]:
    """The application's connection in a transaction, and its placeholder; committed
    when the block ends."""
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        async with aiosqlite.connect(path, isolation_level=None, check_same_thread=False) as db:
            await db.execute("BEGIN IMMEDIATE")
            yield db, "?"
            await db.commit()
    else:
        async with await psycopg.AsyncConnection.connect(url) as conn:  # implicit transaction
            yield conn, "%s"
            await conn.commit()


async def main(url: str, point: str) -> None:
    async with await AsyncRunner.open(chart_from(COUNTER), url) as runner:
        async with app_transaction(url) as (conn, mark):
            await conn.execute(f"INSERT INTO app_rows VALUES (1, {mark})", ("with e1",))
            die_at(point, "after-app-write")
            async with runner.in_transaction(conn) as tx:
                await tx.apply("a", "e1", "Incr", {"by": 1})
            die_at(point, "after-statekit-write")
        die_at(point, "after-commit")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))

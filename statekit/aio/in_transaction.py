"""`AsyncRunner.in_transaction(conn)`: the sync `Runner.in_transaction` block, awaited, on
the application's async connection.

    async with conn.transaction():                       # psycopg.AsyncConnection
        await conn.execute("INSERT INTO orders …")
        async with runner.in_transaction(conn) as tx:
            await tx.apply("order-1", "evt-1", "OrderPlaced", {"total": 2500})
    # committed together, or neither

A SQLAlchemy `AsyncConnection` or `AsyncSession` (over `postgresql+psycopg://` or
`sqlite+aiosqlite://`) is its driver's connection, reached through SQLAlchemy's public
API (`get_raw_connection().driver_connection`); SQLAlchemy keeps the commit.

The block is the sync one (`statekit.runner.in_transaction`: its checks, savepoints,
decisions, statements and errors), run on a thread of the block's own
(`ConnectionThread`), with the application's connection seen as the sync driver's (a
thread per block, not the runner's: a call that waits for a row lock held by another
request's transaction must not stop that transaction's next call):

- a `psycopg.AsyncConnection` is given to the sync block as a `psycopg.Connection` over
  the same libpq session (`_psycopg_view`): one session, one transaction, whichever
  object sends the statements. Each call holds the async connection's lock, so a task
  that uses the connection meanwhile waits for the call instead of interleaving with it;
- an aiosqlite connection is given as the `sqlite3.Connection` it wraps, which the
  runner's thread uses while the caller awaits the call; so it must be opened with
  `check_same_thread=False` (`aiosqlite.connect(path, check_same_thread=False)`),
  else the block refuses it (`UnsupportedConnectionError`, saying so).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

from statekit.aio.connection_thread import ConnectionThread
from statekit.runner.errors import NotInTransactionError, UnsupportedConnectionError
from statekit.runner.group_commit import Item
from statekit.runner.instance import Instance, RecordedEvent
from statekit.runner.outcome import Conflict, Outcome
from statekit.runner.runner import Runner
from statekit.runner.store.borrowed_postgres import ASYNC_VIEW
from statekit.runner.store.store_identity import store_identity
from statekit.runner.transaction import Command

T = TypeVar("T")


class AsyncRunnerInTransaction:
    """What `AsyncRunner.in_transaction` yields: the sync block's methods, awaited; each
    writes in the application's transaction (docs/transactions.md)."""

    __slots__ = ("_call", "_twin")

    def __init__(self, twin: Runner, call: Callable[..., Any]) -> None:
        self._twin, self._call = twin, call

    async def create(
        self, instance_id: str, context: Mapping[str, Any] | None = None, *, exist_ok: bool = False
    ) -> Instance:
        """`Runner.create` in the application's transaction."""
        result: Instance = await self._call(
            self._twin.create, instance_id, context, exist_ok=exist_ok
        )
        return result

    async def apply(
        self,
        instance_id: str,
        event_id: str,
        type: str,
        payload: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
        sequence: int | None = None,
        *,
        after_conflict: Conflict | None = None,
    ) -> Outcome:
        """`Runner.apply` in the application's transaction."""
        result: Outcome = await self._call(
            self._twin.apply, instance_id, event_id, type, payload, expected_version, sequence,
            after_conflict=after_conflict,
        )  # fmt: skip
        return result

    async def apply_batch(self, instance_id: str, commands: Iterable[Command]) -> list[Outcome]:
        """`Runner.apply_batch` in the application's transaction."""
        result: list[Outcome] = await self._call(
            self._twin.apply_batch, instance_id, list(commands)
        )
        return result

    async def apply_many(self, commands: Iterable[tuple[str, Command]]) -> list[Item]:
        """`Runner.apply_many` in the application's transaction."""
        result: list[Item] = await self._call(self._twin.apply_many, list(commands))
        return result

    async def fire_due(self, now_ms: int | None = None, limit: int = 1000) -> list[Outcome]:
        """`Runner.fire_due` in the application's transaction."""
        result: list[Outcome] = await self._call(self._twin.fire_due, now_ms, limit)
        return result

    async def load(self, instance_id: str) -> Instance:
        """`Runner.load`, as the application's transaction sees the instance."""
        result: Instance = await self._call(self._twin.load, instance_id)
        return result

    async def history(self, instance_id: str) -> list[RecordedEvent]:
        """`Runner.history`, as the application's transaction sees it."""
        result: list[RecordedEvent] = await self._call(self._twin.history, instance_id)
        return result


def in_transaction(
    runner: Runner, thread: ConnectionThread, conn: Any
) -> AbstractAsyncContextManager[AsyncRunnerInTransaction]:
    """The block over `conn` (see the module docstring); `thread` is the one that holds
    `runner`'s own connection."""
    return _block(runner, thread, conn)


@asynccontextmanager
async def _block(
    runner: Runner, thread: ConnectionThread, conn: Any
) -> AsyncIterator[AsyncRunnerInTransaction]:
    # The older chart versions the runner's store kept are looked up once, on the thread
    # of the runner's connection (`ChartSet.get` of a version that cannot exist), so that
    # the block's thread never uses that connection.
    await thread.run(runner.charts.get, -1)
    # The runner's store's identity too (`store_identity`, kept per connection), which
    # the block compares with the application's connection's.
    await thread.run(store_identity, runner.store)
    sync_conn, lock = _sync_side(_asynchronous(await _driver_connection(conn)))
    # A thread of the block's own: a call waiting for a row lock another application
    # transaction holds must not keep that transaction's next call from running.
    own = ConnectionThread("statekit-aio-transaction")

    async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        async with lock:  # a cancelled request waits for the call to end (`run_to_end`)
            return await own.run_to_end(fn, *args, **kwargs)

    try:
        if isinstance(sync_conn, sqlite3.Connection):
            await own.run(_usable_here, sync_conn)
        block = await call(runner.in_transaction, sync_conn)
        twin = await call(block.__enter__)
        try:
            yield AsyncRunnerInTransaction(twin, call)
        except BaseException as exc:
            if not await call(block.__exit__, type(exc), exc, exc.__traceback__):
                raise
        else:
            await call(block.__exit__, None, None, None)
    finally:
        own.shutdown()


async def _driver_connection(conn: Any) -> Any:
    """The driver's connection under a SQLAlchemy `AsyncConnection` or `AsyncSession`
    (its transaction begun, as SQLAlchemy's autobegin would), else `conn` itself."""
    if not type(conn).__module__.startswith("sqlalchemy."):
        return conn
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

    if isinstance(conn, AsyncSession):
        conn = await conn.connection()
    if not isinstance(conn, AsyncConnection):
        return conn  # a sync SQLAlchemy object: the sync block says what to use instead
    if not conn.in_transaction():
        await conn.begin()
    raw = await conn.get_raw_connection()
    return raw.driver_connection


def _asynchronous(conn: Any) -> Any:
    """`conn`, unless it is a sync driver's connection (`UnsupportedConnectionError`)."""
    if isinstance(conn, sqlite3.Connection):
        raise UnsupportedConnectionError(
            "AsyncRunner.in_transaction was given a sync sqlite3.Connection: use "
            "Runner.in_transaction with it, or give this block an aiosqlite connection "
            "(aiosqlite.connect(path, check_same_thread=False))"
        )
    kind = type(conn)
    if kind.__module__.split(".")[0] == "psycopg" and kind.__name__ == "Connection":
        raise UnsupportedConnectionError(
            "AsyncRunner.in_transaction was given a sync psycopg.Connection: use "
            "Runner.in_transaction with it, or give this block a psycopg.AsyncConnection"
        )
    return conn


def _sync_side(conn: Any) -> tuple[Any, asyncio.Lock]:
    """The sync driver's connection the block writes on, and the lock each call holds."""
    kind = type(conn)
    module = kind.__module__.split(".")[0]
    if module == "psycopg" and hasattr(conn, "pgconn") and isinstance(conn.lock, asyncio.Lock):
        return _psycopg_view(conn), conn.lock
    if module == "aiosqlite":
        if not hasattr(type(conn), "_conn"):
            raise UnsupportedConnectionError(
                "AsyncRunner.in_transaction cannot reach the sqlite3 connection this "
                "aiosqlite connection wraps: aiosqlite no longer has `_conn`, which statekit "
                "relies on (tested with aiosqlite 0.22)"
            )
        try:
            return conn._conn, asyncio.Lock()
        except ValueError as exc:  # aiosqlite's "no active connection": closed
            raise NotInTransactionError(
                "AsyncRunner.in_transaction: the application's aiosqlite connection is "
                "closed, so there is no transaction to write in: give the block an open "
                "connection in its transaction"
            ) from exc
    return conn, asyncio.Lock()  # a sync connection: the sync block says whether it knows it


def _usable_here(conn: sqlite3.Connection) -> None:
    """`UnsupportedConnectionError` unless this thread may use `conn` (one that aiosqlite
    opened without `check_same_thread=False` belongs to aiosqlite's thread)."""
    try:
        conn.execute("SELECT 1").close()  # reads nothing, begins nothing
    except sqlite3.ProgrammingError as exc:
        if "closed" in str(exc):
            raise NotInTransactionError(
                "AsyncRunner.in_transaction: the application's aiosqlite connection is "
                "closed, so there is no transaction to write in: give the block an open "
                "connection in its transaction"
            ) from exc
        raise UnsupportedConnectionError(
            "AsyncRunner.in_transaction writes on the application's aiosqlite connection "
            "from a thread of its own while the caller awaits: open it with "
            f"aiosqlite.connect(path, check_same_thread=False) ({exc})"
        ) from exc


PSYCOPG_INTERNALS = ("_autocommit",)
"""psycopg's private attributes `_psycopg_view` sets that psycopg's own constructor
makes, there being no public way to make a sync connection over an async one's session
(checked: psycopg 3.3.9). The other, `_pool`, psycopg only reads when a connection is
dropped (`hasattr`): tests/aio/test_driver_internals.py checks that it still does."""


def _psycopg_view(conn: Any) -> Any:
    """A `psycopg.Connection` over the libpq session of the `psycopg.AsyncConnection`
    `conn`: the same server session, transaction and autocommit mode. It is never
    closed (closing it would close the application's connection); marked as a pool's
    connection (`_pool`), as psycopg_pool marks those it lends, so that psycopg does
    not warn when it is dropped open."""
    import psycopg  # the application gave a psycopg connection: the driver is installed

    view = psycopg.Connection(conn.pgconn)
    missing = [name for name in PSYCOPG_INTERNALS if name not in vars(view)]
    if missing:
        raise UnsupportedConnectionError(
            f"AsyncRunner.in_transaction cannot lend this psycopg {psycopg.__version__} "
            f"AsyncConnection's session to its sync block: psycopg no longer has "
            f"{', '.join(missing)}, which statekit relies on (tested up to psycopg 3.3; "
            "its `postgres` extra asks for psycopg<3.4)"
        )
    view._pool = None
    # the async connection's mode, which decides whether a statement begins a transaction
    # (the block refuses an autocommit connection outside one); set as psycopg's own
    # constructor sets it, since the property refuses a change inside a transaction
    view._autocommit = conn.autocommit
    # its messages then name `async with conn.transaction()`; its identity is kept
    # for `conn` (`store_identity`)
    setattr(view, ASYNC_VIEW, conn)
    return view

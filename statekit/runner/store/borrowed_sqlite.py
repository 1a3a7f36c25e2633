"""A SQLite store over the application's `sqlite3.Connection`, inside its transaction.

`Runner.in_transaction` (`runner.in_transaction`) writes with the runner's own write
path through this store: every `write()` (and `read()`) block is a savepoint in the
application's transaction, `SAVEPOINT statekit_call` … `RELEASE`, rolled back to on an
exception, so that a call that fails leaves none of its rows; the `COMMIT` and the
`ROLLBACK` are the application's.

The write lock first. The runner's own transactions begin with `BEGIN IMMEDIATE`
(`store.sqlite`), so that read → decide → write runs alone. Here the transaction is the
application's, begun however it was: before each block this store takes the write
lock with a write that changes nothing (`_TAKE_WRITE_LOCK`), before anything is read.
In a transaction holding the lock already (`BEGIN IMMEDIATE`, or one that wrote) that
costs one statement; in a deferred one that has read nothing yet, it waits for the lock
as `BEGIN IMMEDIATE` would (the busy timeout); with Python's legacy transaction control
(`isolation_level` not None: the module's and SQLAlchemy's default) and no transaction
open, the module begins one before that write, so it is `BEGIN` + the lock at once. A
deferred transaction that has read while another connection committed can never take
the lock (`SQLITE_BUSY_SNAPSHOT`, at once): `TransactionAbortedError`. A connection in
autocommit with no transaction open is refused (`NotInTransactionError`): each
statement would commit on its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from statekit.runner.errors import NoStoreError, NotInTransactionError, TransactionAbortedError
from statekit.runner.store.borrowed_end import ended_connection
from statekit.runner.store.migrations import MIGRATIONS_TABLE
from statekit.runner.store.sqlite import SQLiteStore, _Cursor

SAVEPOINT = "statekit_call"
_TAKE_WRITE_LOCK = f"UPDATE {MIGRATIONS_TABLE} SET version = version WHERE 0"
_BUSY_SNAPSHOT = 517  # SQLITE_BUSY_SNAPSHOT: a deferred reader whose snapshot is stale


class BorrowedSQLiteStore(SQLiteStore):
    """`SQLiteStore` over the application's connection (see the module docstring); it
    opens, creates and closes nothing."""

    borrowed = True

    def __init__(self, conn: sqlite3.Connection) -> None:
        try:
            conn.total_changes  # noqa: B018 (raises on a closed connection, reads nothing)
        except sqlite3.ProgrammingError as exc:
            raise NotInTransactionError(
                "the application's sqlite3 connection is closed, so there is no transaction "
                "to write in: give the block an open connection in its transaction"
            ) from exc
        self._conn = conn
        self.path, self.busy_timeout = ":memory:", 0.0  # (read next, for the messages)
        files = {row[1]: row[2] for row in self.execute("PRAGMA database_list").fetchall()}
        self.path = files.get("main") or ":memory:"
        busy = self.execute("PRAGMA busy_timeout").fetchone()
        self.busy_timeout = float(busy[0]) / 1000 if busy else 0.0
        self.url = f"sqlite:///{self.path}"
        self.read_only = False
        self._savepoint = False  # whether this store's savepoint is open
        self._writer = self._transaction("BEGIN", writes=True)
        self._reader = self._transaction("BEGIN")

    # ---- statements: rows by position, whatever the application's row factory ------------
    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        """`SQLiteStore.execute` on a cursor of its own (tuples, not the connection's
        `row_factory`)."""
        try:
            cursor = self._conn.cursor()
            cursor.row_factory = None
            return _Cursor(cursor.execute(sql, params), self)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    # ---- the savepoint in the application's transaction ----------------------------------
    def _control(self, statement: str) -> None:
        if statement == "BEGIN":
            self.take_write_lock()
            self._run(f"SAVEPOINT {SAVEPOINT}")
            self._savepoint = True
            return
        self._savepoint = False
        if statement == "ROLLBACK":
            self._run(f"ROLLBACK TO {SAVEPOINT}")
        self._run(f"RELEASE {SAVEPOINT}")

    def _open_transaction(self) -> bool:
        return self._savepoint and self._conn.in_transaction

    def _run(self, statement: str) -> None:
        try:
            self._conn.execute(statement)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    def check_transaction(self) -> None:
        """`NotInTransactionError` unless the connection is in a transaction statekit's
        rows can join (or Python's `sqlite3` begins one with the next write)."""
        conn = self._conn
        if not conn.in_transaction and not _implicit_transactions(conn):
            raise NotInTransactionError(
                f"{self._where}: the application's connection is not in a transaction "
                "(autocommit, and none open), so statekit's rows would commit on their own: "
                "run BEGIN IMMEDIATE on it first"
            )

    def enter(self) -> None:
        """What a block checks first: a transaction to join, and the write lock taken
        before anything is read (a read first would start a deferred transaction's
        snapshot, and another connection's commit would then keep it from writing)."""
        self.take_write_lock()

    def take_write_lock(self) -> None:
        """Make sure the application's transaction holds the write lock (see the module
        docstring): `NotInTransactionError` when there is no transaction to join,
        `TransactionAbortedError` when a deferred one cannot take the lock any more."""
        self.check_transaction()
        try:
            self._conn.execute(_TAKE_WRITE_LOCK)
        except sqlite3.Error as exc:
            if str(exc).startswith("no such table"):
                raise NoStoreError(
                    f"no statekit store at {self.url}: the database has no statekit tables; "
                    "the application's connection must be to the runner's database"
                ) from exc
            if (getattr(exc, "sqlite_errorcode", None) or 0) == _BUSY_SNAPSHOT:
                raise TransactionAbortedError(
                    f"{self._where}: the application's transaction began deferred and read "
                    "before another connection committed, so it can never take the write "
                    "lock: roll it back and run it again, beginning it with BEGIN IMMEDIATE"
                ) from exc
            raise self.translate(exc) from exc

    def translate(self, exc: sqlite3.Error) -> Exception:
        """`SQLiteStore.translate`, and a closed connection as `NotInTransactionError`."""
        if isinstance(exc, sqlite3.ProgrammingError) and "closed" in str(exc):
            return NotInTransactionError(
                f"{self._where}: the application's sqlite3 connection is closed, so there "
                "is no transaction to write in: give the block an open connection in its "
                "transaction"
            )
        return super().translate(exc)

    def write(self) -> AbstractContextManager[None]:
        """A savepoint in the application's transaction, after taking the write lock."""
        return self._writer

    def read(self) -> AbstractContextManager[None]:
        """As `write`: the application's transaction is one snapshot already."""
        return self._reader

    def close(self) -> None:
        """Nothing: the connection is the application's."""

    def end(self) -> None:
        """The block this store served has ended: any later use is refused."""
        self._conn = ended_connection()


def _implicit_transactions(conn: sqlite3.Connection) -> bool:
    """Whether Python's `sqlite3` begins a transaction by itself before a write (legacy
    transaction control with an isolation level; Python 3.12's `autocommit` left as
    `LEGACY_TRANSACTION_CONTROL`)."""
    autocommit = getattr(conn, "autocommit", -1)  # -1: LEGACY_TRANSACTION_CONTROL
    if autocommit is True or autocommit is False:
        return not autocommit  # False: a transaction is always open anyway
    return conn.isolation_level is not None

"""A PostgreSQL store over the application's `psycopg.Connection`, inside its transaction.

As `borrowed_sqlite`: every `write()` (and `read()`) block of the runner's write path is
a savepoint in the application's transaction (`SAVEPOINT statekit_call` … `RELEASE
SAVEPOINT`, rolled back to on an exception); the `COMMIT` and the `ROLLBACK` are the
application's. The savepoint goes as the store's own `BEGIN` goes (`store.postgres`):
held back and sent with the block's first statement, and its release with the last
writes (`_end_statement`), so a call costs the round trips it costs in the runner's
own transaction.

The row lock (`SELECT … FOR UPDATE`) and the version-guarded update work as in the
runner's own READ COMMITTED transactions. Under REPEATABLE READ or SERIALIZABLE a row
changed after the transaction's snapshot cannot be locked: the server raises a
serialization failure (40001), which, like a deadlock (40P01) or a lost connection,
ends the application's transaction; it comes out of the call as
`TransactionAbortedError` (`retrying.aborted`), never retried here, since only the
application can run its whole transaction again.

What the connection must be (`check_transaction`, before each block): in a
transaction (`conn.transaction()`, or psycopg's implicit one: a connection not in
autocommit begins one with the first statement) that has not failed.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from statekit.runner.errors import NotInTransactionError
from statekit.runner.store.base import Store
from statekit.runner.store.borrowed_end import ended_connection
from statekit.runner.store.connection_policy import (
    LOST,
    NotCommitted,
    TransactionInterrupted,
    failure_kind,
)
from statekit.runner.store.postgres import PostgresStore
from statekit.runner.store.rows import DecidedRows

SAVEPOINT = "statekit_call"
ASYNC_VIEW = "_statekit_async_view"
"""The attribute `statekit.aio` sets on the sync view of an application's
`psycopg.AsyncConnection`."""


class BorrowedPostgresStore(PostgresStore):
    """`PostgresStore` over the application's connection (see the module docstring); it
    connects, creates and closes nothing."""

    borrowed = True
    _end_statement = f"RELEASE SAVEPOINT {SAVEPOINT}"

    def __init__(self, conn: Any, psycopg: Any) -> None:
        if conn.closed:
            raise NotInTransactionError(
                "the application's psycopg connection is closed, so there is no "
                "transaction to write in: give the block an open connection in its transaction"
            )
        info = conn.info
        Store.__init__(self, f"postgresql://{info.user}@{info.host}:{info.port}/{info.dbname}")
        self._writer = self._transaction("BEGIN", writes=True)
        self._reader = self._transaction("BEGIN")
        self._use(psycopg, conn)
        # the async block lends its connection as a sync view (`statekit.aio`): its advice
        # names the async form
        self._opens = "async with" if getattr(conn, ASYNC_VIEW, False) else "with"

    def enter(self) -> None:
        """What a block checks first: a transaction to join (`check_transaction`)."""
        self.check_transaction()

    def check_transaction(self) -> None:
        """`NotInTransactionError` unless the connection is in a transaction statekit's
        rows can join (or begins one with the next statement)."""
        conn = self._conn
        status = self._psycopg.pq.TransactionStatus
        state = conn.info.transaction_status
        if state == status.INTRANS or (state == status.IDLE and not conn.autocommit):
            return
        where = self._display_url()
        if state == status.IDLE:
            raise NotInTransactionError(
                f"{where}: the application's connection is in autocommit mode with no "
                "transaction open, so statekit's rows would commit on their own: write "
                f"inside `{self._opens} conn.transaction():`"
            )
        if state == status.INERROR:
            raise NotInTransactionError(
                f"{where}: a statement of the application's transaction failed earlier, so "
                "nothing of it can commit: roll it back and run it again"
            )
        raise NotInTransactionError(
            f"{where}: the application's connection cannot take statements now "
            f"({state.name}: closed, broken, or busy with another query)"
        )

    # ---- the savepoint in the application's transaction ----------------------------------
    def _control(self, statement: str) -> None:
        if statement == "BEGIN":
            self.check_transaction()
            super()._control("BEGIN")
            self._begin = f"SAVEPOINT {SAVEPOINT}"  # sent with the block's first statement
            return
        if statement == "ROLLBACK":
            super()._control(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")
        super()._control(self._end_statement)

    def write_decided(self, rows: DecidedRows, *, last: bool = False) -> bool:
        """`PostgresStore.write_decided`, releasing the savepoint with the writes only when
        they end the outermost block (a call's savepoint holds its transactions: `retrying`)."""
        return super().write_decided(rows, last=last and self._depth == 1)

    def _interrupted(self, exc: Exception, *, commit: bool) -> TransactionInterrupted | None:
        """`PostgresStore._interrupted` without closing the connection or making another
        one (it is the application's): the application's transaction is over either way
        (`retrying.aborted`)."""
        kind = failure_kind(exc)
        if kind is None:
            return None
        self._written, self._begin, self._committed = [], None, False
        if kind == LOST:
            self._broken = True
        words = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return NotCommitted(f"{self._display_url()}: {words}")

    def _heal(self) -> None:
        raise NotCommitted(f"{self._display_url()}: the connection was lost")

    def reconnect(self) -> None:
        """Nothing: the connection is the application's."""

    def write(self) -> AbstractContextManager[None]:
        """A savepoint in the application's transaction."""
        return self._writer

    def read(self) -> AbstractContextManager[None]:
        """As `write`: the application's transaction gives the reads their snapshot."""
        return self._reader

    def close(self) -> None:
        """Nothing: the connection is the application's."""

    def end(self) -> None:
        """The block this store served has ended: any later use is refused."""
        self._conn = ended_connection()

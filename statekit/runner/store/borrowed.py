"""`borrowed_store(connection)`: a `Store` over the application's connection, inside its
transaction (`Runner.in_transaction`).

Which connections: a `sqlite3.Connection` (`borrowed_sqlite`), a psycopg 3
`Connection` (`borrowed_postgres`), and SQLAlchemy 2's `Connection` and ORM `Session`
over either driver, reached through SQLAlchemy's public API: `Session.connection()`
(which begins the session's transaction when none is), then
`Connection.connection.driver_connection`. SQLAlchemy stays the owner of the
transaction: a `Connection` that has not begun one is begun as SQLAlchemy's own
autobegin would (`Connection.begin()`), and its `commit()` / `rollback()` end it.
psycopg and SQLAlchemy are imported only when such a connection is given.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from statekit.runner.errors import UnsupportedConnectionError
from statekit.runner.store.borrowed_postgres import BorrowedPostgresStore
from statekit.runner.store.borrowed_sqlite import BorrowedSQLiteStore

SUPPORTED = (
    "a sqlite3.Connection, a psycopg 3 Connection, or a SQLAlchemy Connection or ORM "
    "Session over either"
)


def borrowed_store(connection: object) -> BorrowedSQLiteStore | BorrowedPostgresStore:
    """A store writing on `connection`, in its transaction (UnsupportedConnectionError for
    anything else than what the module docstring lists)."""
    if isinstance(connection, sqlite3.Connection):
        return BorrowedSQLiteStore(connection)
    module = type(connection).__module__ or ""
    if module.startswith("sqlalchemy."):
        return borrowed_store(_driver_connection(connection))
    if module.split(".")[0] == "psycopg":
        import psycopg  # the application's driver: present, since it made the connection

        if isinstance(connection, psycopg.Connection):
            return BorrowedPostgresStore(connection, psycopg)
        if isinstance(connection, psycopg.AsyncConnection):
            raise UnsupportedConnectionError(
                "an asynchronous psycopg connection needs the asynchronous runner "
                "(statekit.aio.AsyncRunner.in_transaction), not Runner.in_transaction"
            )
    raise UnsupportedConnectionError(
        f"Runner.in_transaction cannot write on a {type(connection).__module__}."
        f"{type(connection).__qualname__}: give it {SUPPORTED}"
    )


def _driver_connection(connection: Any) -> Any:
    """The driver's connection under a SQLAlchemy `Connection` or `Session`, its
    transaction begun (see the module docstring)."""
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

    if isinstance(connection, Session):
        connection = connection.connection()
    if not isinstance(connection, Connection):
        raise UnsupportedConnectionError(
            f"Runner.in_transaction cannot write on a SQLAlchemy {type(connection).__name__}: "
            "give it the Connection of the transaction (`with engine.begin() as conn:`) or "
            "the ORM Session"
        )
    if not connection.in_transaction():
        connection.begin()  # what SQLAlchemy's autobegin does; its commit() ends it
    driver = connection.connection.driver_connection
    if isinstance(driver, sqlite3.Connection) or type(driver).__module__.split(".")[0] == "psycopg":
        return driver
    raise UnsupportedConnectionError(
        f"Runner.in_transaction cannot write on a SQLAlchemy connection over "
        f"{type(driver).__module__} ({connection.dialect.name}+{connection.dialect.driver}): "
        "use sqlite:// (sqlite3) or postgresql+psycopg:// (psycopg 3)"
    )

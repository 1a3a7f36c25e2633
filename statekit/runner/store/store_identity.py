"""Which database a store writes to: `in_transaction` refuses the application's
connection unless it is to the runner's own store's database (`StoreMismatchError`).

An identity is a tuple, compared whole; the dialect comes first, so a SQLite connection
never matches a PostgreSQL store:

- SQLite: the real path of the connection's main database file (`PRAGMA
  database_list`); an in-memory database is only itself (the connection's `id`);
- PostgreSQL: the database (`current_database()`), the server's port setting (the same
  over TCP and a Unix socket), and the cluster's `system_identifier` (made by
  `initdb`, kept across restarts; PUBLIC may read it by default, and when an
  administrator revoked `pg_control_system()` it is left out rather than asked: a
  statement that fails would abort the application's transaction). Identities are kept
  per connection object (`connection_identity`): a connection never changes database.

Nothing is stored in the database for this: no schema change.
"""

from __future__ import annotations

import os
import weakref
from contextlib import suppress
from typing import Any

from statekit.runner.store.base import Store
from statekit.runner.store.borrowed_postgres import ASYNC_VIEW
from statekit.runner.store.connection_policy import TransactionInterrupted
from statekit.runner.store.postgres import PostgresStore
from statekit.runner.store.sqlite import SQLiteStore

Identity = tuple[str, ...]

POSTGRES_IDENTITY = (
    "SELECT current_database(), current_setting('port'), "
    "has_function_privilege('pg_control_system()', 'EXECUTE')"
)
"""Reads only, and cannot fail for an ordinary role (it must never abort the
application's transaction)."""
CLUSTER_IDENTITY = "SELECT system_identifier::text FROM pg_control_system()"
"""Asked only when the role may (it may by default, PUBLIC having EXECUTE)."""

_known: weakref.WeakKeyDictionary[Any, Identity] = weakref.WeakKeyDictionary()
_charts_found: dict[Identity, set[str]] = {}


def sqlite_identity(path: str, connection: object) -> Identity:
    """A SQLite database's identity: its file's real path (`connection` for an in-memory
    database, which no other connection can reach)."""
    if path in ("", ":memory:"):
        return ("sqlite", ":memory:", str(id(connection)))
    return ("sqlite", os.path.realpath(path))


def connection_identity(connection: Any, query: Any) -> Identity:
    """The identity of the PostgreSQL database `connection` is to, asked with `query`
    (a function running `POSTGRES_IDENTITY`, returning its row) the first time only: a
    connection never changes database, so it is kept for as long as the connection
    object lives (a weak reference: the cache holds no connection open)."""
    try:
        return _known[connection]
    except (KeyError, TypeError):
        pass
    database, port, may_read_cluster = query(POSTGRES_IDENTITY)
    cluster = str(query(CLUSTER_IDENTITY)[0]) if may_read_cluster else ""
    identity: Identity = ("postgresql", str(database), str(port), cluster)
    with suppress(TypeError):  # not weakly referable: asked again next time
        _known[connection] = identity
    return identity


def store_identity(store: Store) -> Identity | None:
    """The identity of the database `store` writes to; None for a kind of store this
    module does not know (the caller then has no identity to compare)."""
    if isinstance(store, SQLiteStore):
        return sqlite_identity(store.path, store._conn)
    if isinstance(store, PostgresStore):
        if getattr(store, "borrowed", False):  # the application's connection: its transaction
            return connection_identity(
                _session_key(store._conn),
                lambda sql: store.execute(sql).fetchone(),
            )
        return connection_identity(store._conn, lambda sql: _own_query(store, sql))
    return None


def _own_query(store: PostgresStore, sql: str) -> Any:
    """`sql`'s row on the store's own (autocommit) connection, outside any transaction;
    a connection found lost is replaced and asked again, once."""
    try:
        return store.execute(sql).fetchone()
    except TransactionInterrupted:
        return store.execute(sql).fetchone()


def _session_key(conn: Any) -> Any:
    """The object that stands for the application's server session: for the sync view the
    async block makes of a `psycopg.AsyncConnection` (a new one each block), that
    connection; else `conn`."""
    return getattr(conn, ASYNC_VIEW, None) or conn


def charts_found(identity: Identity) -> set[str]:
    """The digests of the charts a block found registered in the database `identity`
    names, with statekit's schema checked: a database keeps its charts (they are never
    deleted), and its schema is checked as the runner's own store checks it, once (a
    newer statekit migrating the database meanwhile goes unnoticed by both alike); so
    the next block on that database skips those queries. Kept by database, not by
    connection (a `sqlite3.Connection` cannot be weakly referred to; the SQLite identity
    is read on each block anyway, without a round trip)."""
    return _charts_found.setdefault(identity, set())


def describe(identity: Identity) -> str:
    """An identity in words, for a message."""
    if identity[0] == "sqlite":
        return "an in-memory SQLite database" if identity[1] == ":memory:" else identity[1]
    cluster = f", cluster {identity[3]}" if identity[3] else ""
    return f"PostgreSQL database {identity[1]!r} on port {identity[2]}{cluster}"

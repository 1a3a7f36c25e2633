"""Where the runner keeps its data: `open_store(url)` gives a `Store`.

    store = statekit.open_store("sqlite:///tasks.db")      # or sqlite:////abs/path.db
    store = statekit.open_store("postgresql://user@127.0.0.1:5432/db")
    store = open_read_only_store("sqlite:///tasks.db")     # a reader: creates nothing
    store = open_existing_store("sqlite:///tasks.db")      # a writer that creates nothing

Modules: `base` (`Store`, the interface the runner, the dispatcher and the
inbox use: its connection and transaction mechanics), the SQL both dialects
share by group of tables (`schema_queries`: schema, charts and cross-table
checks; `instance_queries`: instance rows and the write of one transaction's
decisions; `event_queries`: events, rejections, snapshots; `timer_queries`;
`message_queries`: outbox and inbox; `sql_access`: what they use of the
store), `hold_points` (a test's holds), `sqlite` (`SQLiteStore`) and `postgres`
(`PostgresStore`): each dialect's locking (and PostgreSQL's writes in one query, whose
text `postgres_query_text` makes), `borrowed` (a store over the application's
connection, inside its transaction, for `Runner.in_transaction`; `borrowed_sqlite`,
`borrowed_postgres`), `migrations` (the versioned schema; the SQL of versions 1 and 3-6
in `migrations_v1`, `migrations_v3_v6`), `rows` (the stored forms), `packing` (how an
event row's hash, evidence and status are kept on disk). psycopg is imported only when a
PostgreSQL store is opened.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any
from urllib.parse import parse_qs, urlsplit

from statekit.runner.errors import SchemaVersionError, StoreURLError
from statekit.runner.store.base import Store
from statekit.runner.store.connection_policy import split_policy
from statekit.runner.store.postgres import PostgresStore
from statekit.runner.store.sqlite import SQLiteStore

__all__ = [
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "open_existing_store",
    "open_read_only_store",
    "open_store",
]


def open_store(url: str, **options: Any) -> Store:
    """Open (creating or upgrading its schema) the store at `url`: what a writer does.

    `sqlite:///relative.db`, `sqlite:////absolute.db` or `sqlite:///:memory:`
    (query options `synchronous=FULL|NORMAL`, `busy_timeout=<seconds>`), or
    `postgresql://…` / `postgres://…` (a libpq URL; needs psycopg 3, the
    `statekit[postgres]` extra). Raises `StoreURLError` for anything else. Both take
    `connect_timeout=<seconds>` and `retry_for=<seconds>` (`connection_policy`): a
    PostgreSQL server that refuses or loses the connection is waited for that long,
    then `StoreUnavailableError`.

    A SQLite file is checked on open (`PRAGMA quick_check`): a damaged one raises
    `DamagedStoreError` so that nothing is appended to it, unless
    `check_integrity=False` (what `statekit verify` does, to report what it can read).
    A database locked for longer than the busy timeout raises `StoreBusyError`.
    """
    return _opened(url, options, read_only=False)


def open_read_only_store(url: str, **options: Any) -> Store:
    """Open the statekit store at `url` to read it, never creating, upgrading or writing
    anything: what `statekit verify`, `timers`, `outbox` and `migrate --dry-run` use.

    The URL and options are `open_store`'s. Raises `NoStoreError` when there is no
    store there (no such SQLite file, a file that is not a SQLite database, a
    database without statekit's tables) and `SchemaVersionError` when the store's
    schema is older (a writer upgrades it: `open_store`) or newer than this
    statekit's. The connection refuses writes (SQLite `query_only`, PostgreSQL
    `default_transaction_read_only`), so a `Runner` over it can read and dry-run
    only. A separate function rather than an option of `open_store`: the caller
    says which kind of opening it wants, and a reader cannot create a store by
    forgetting a flag.
    """
    return _opened(url, options, read_only=True)


def open_existing_store(url: str, **options: Any) -> Store:
    """Open the statekit store at `url` to write, upgrading an older schema as `open_store`
    does but never creating a store: what `statekit migrate` uses, since a store that is
    not there holds nothing to move (a typo in its path must not make an empty one).

    Raises `NoStoreError` as `open_read_only_store` does; otherwise `open_store`'s errors.
    """
    # an older schema is the writer's to upgrade (a newer one it refuses as well)
    with suppress(SchemaVersionError):
        open_read_only_store(url, **options).close()
    return open_store(url, **options)


def _opened(url: str, options: dict[str, Any], *, read_only: bool) -> Store:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        if parts.netloc:
            raise StoreURLError(
                f"{url!r}: a SQLite URL has no host; use sqlite:///relative.db or "
                "sqlite:////absolute/path.db"
            )
        path = parts.path[1:] if parts.path.startswith("/") else parts.path
        if not path:
            raise StoreURLError(f"{url!r}: no database file (sqlite:///path/to/file.db)")
        # the connection policy's parameters are checked and kept, with nothing to retry
        # on a file (`connection_policy`); the other parameters are SQLite's
        policy, plain = split_policy(url)
        query = {k: v[-1] for k, v in parse_qs(urlsplit(plain).query).items()}
        store = SQLiteStore(url, path, {**query, **options}, read_only=read_only)
        store.policy = policy
        return store
    if scheme in ("postgresql", "postgres"):
        return PostgresStore(url, **options, read_only=read_only)
    raise StoreURLError(
        f"{url!r}: unknown store; use sqlite:///path.db or postgresql://user@host/db"
    )

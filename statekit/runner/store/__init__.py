"""Where the runner keeps its data: `open_store(url)` gives a `Store`.

    store = statekit.open_store("sqlite:///tasks.db")      # or sqlite:////abs/path.db
    store = statekit.open_store("postgresql://user@127.0.0.1:5432/db")

Modules: `base` (`Store`, the interface the runner, the dispatcher and the
inbox use, with the SQL both dialects share), `sqlite` (`SQLiteStore`) and
`postgres` (`PostgresStore`): each dialect's locking (and PostgreSQL's
writes in one query), `migrations` (the versioned schema), `rows` (the stored
forms), `packing` (how an event row's hash, evidence and status are kept on
disk). psycopg is imported only when a PostgreSQL store is opened.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from statekit.runner.errors import StoreURLError
from statekit.runner.store.base import Store
from statekit.runner.store.postgres import PostgresStore
from statekit.runner.store.sqlite import SQLiteStore

__all__ = ["PostgresStore", "SQLiteStore", "Store", "open_store"]


def open_store(url: str, **options: Any) -> Store:
    """Open (creating or upgrading its schema) the store at `url`.

    `sqlite:///relative.db`, `sqlite:////absolute.db` or `sqlite:///:memory:`
    (query options `synchronous=FULL|NORMAL`, `busy_timeout=<seconds>`), or
    `postgresql://…` / `postgres://…` (a libpq URL; needs psycopg 3, the
    `statekit[postgres]` extra). Raises `StoreURLError` for anything else.

    A SQLite file is checked on open (`PRAGMA quick_check`): a damaged one raises
    `DamagedStoreError` so that nothing is appended to it, unless
    `check_integrity=False` (what `statekit verify` does, to report what it can read).
    A database locked for longer than the busy timeout raises `StoreBusyError`.
    """
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
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        return SQLiteStore(url, path, {**query, **options})
    if scheme in ("postgresql", "postgres"):
        return PostgresStore(url, **options)
    raise StoreURLError(
        f"{url!r}: unknown store; use sqlite:///path.db or postgresql://user@host/db"
    )

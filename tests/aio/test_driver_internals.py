"""The private driver attributes `AsyncRunner.in_transaction` relies on, there being no
public way (pyproject's upper bounds name them): psycopg's `_pool` and `_autocommit` on
a `Connection` made over an `AsyncConnection`'s session, and aiosqlite's `_conn`, the
`sqlite3.Connection` it wraps. When a driver release drops one, this fails saying which,
before any user meets it."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import warnings
from pathlib import Path

import aiosqlite
import psycopg

from statekit.aio.in_transaction import PSYCOPG_INTERNALS


def test_psycopg_still_has_what_the_async_block_sets(pg_url: str) -> None:
    async def main() -> None:
        async with await psycopg.AsyncConnection.connect(pg_url) as conn:
            view = psycopg.Connection(conn.pgconn)
            missing = [name for name in PSYCOPG_INTERNALS if name not in vars(view)]
            assert not missing, (
                f"psycopg {psycopg.__version__} has no {missing}: statekit.aio.in_transaction "
                "(_psycopg_view) must find another way before the psycopg<3.4 bound is raised"
            )
            view._autocommit = True  # what the block does: the mode follows
            assert view.autocommit is True
            assert _dropping_warns(conn, mark=False), (
                "psycopg no longer warns when an open Connection is dropped: _pool is moot"
            )
            assert not _dropping_warns(conn, mark=True), (
                f"psycopg {psycopg.__version__} warns on dropping a connection marked "
                "_pool = None: statekit.aio.in_transaction (_psycopg_view) must mark it "
                "another way before the psycopg<3.4 bound is raised"
            )

    asyncio.run(main())


def test_aiosqlite_still_wraps_a_reachable_sqlite3_connection(tmp_path: Path) -> None:
    async def main() -> None:
        async with aiosqlite.connect(tmp_path / "a.db", check_same_thread=False) as conn:
            assert isinstance(getattr(conn, "_conn", None), sqlite3.Connection), (
                f"aiosqlite {aiosqlite.__version__} has no `_conn`: statekit.aio.in_transaction "
                "must find another way before the aiosqlite<0.23 bound is raised"
            )

    asyncio.run(main())


def _dropping_warns(conn: psycopg.AsyncConnection[object], *, mark: bool) -> bool:
    """Whether dropping a sync view of `conn`'s session (marked `_pool = None`, as the
    block marks it, or not) makes psycopg warn."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        view = psycopg.Connection(conn.pgconn)
        if mark:
            view._pool = None
        del view
        gc.collect()
    return any(issubclass(w.category, ResourceWarning) for w in caught)

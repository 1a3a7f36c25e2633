"""Every row of every statekit table of a store, for comparing two stores' bytes."""

from __future__ import annotations

import sqlite3
from typing import Any

WALL_CLOCK = frozenset(
    {"registered_at", "recorded_at", "processed_at", "created_at", "updated_at", "pruned_at",
     "applied_at"}
)  # fmt: skip
"""Columns holding the runner's own `time.time()` (not its injectable clock): two runs
write them at different instants, so they are compared as present or NULL only. The
outbox's dispatch columns follow the dispatcher's clock, which the tests inject."""

Tables = dict[str, list[tuple[Any, ...]]]


def stored_tables(url: str) -> Tables:
    """Table name → its rows (every column, wall-clock ones as present/NULL), sorted."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            names = [
                n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            return {n: _rows(conn.execute(f"SELECT * FROM {n}")) for n in names}
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        names = [
            n
            for (n,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        ]
        return {n: _rows(conn.execute(f"SELECT * FROM {n}")) for n in names}


def _rows(cursor: Any) -> list[tuple[Any, ...]]:
    columns = [d[0] for d in cursor.description]
    rows = [
        tuple(
            (value is not None) if column in WALL_CLOCK else value
            for column, value in zip(columns, row, strict=True)
        )
        for row in cursor.fetchall()
    ]
    return sorted(rows, key=repr)

"""The PostgreSQL store (psycopg 3, imported only when such a store is opened).

Locking: a write transaction (READ COMMITTED) reads the instance row with
`SELECT … FOR UPDATE`. Writers of one instance queue on its row lock, and the
one that gets it next reads the version its predecessor committed, so each
decision is made on the latest state and exactly one event wins each version;
writers of different instances never wait for each other, on one machine or
many. We lock rather than only guard the UPDATE with the version read
(optimistic concurrency) because under contention the optimistic loser has
already run the step and must start over, and a caller that passed no
`expected_version` would need a hidden retry loop; with the lock there is
nothing to retry. The UPDATE still says `WHERE version = <read>` as a second
check. Each transaction locks a single instance row, so there is no lock
order to get wrong and no deadlock.

Outbox: dispatchers claim with `FOR UPDATE SKIP LOCKED`, so several of them
poll at once without waiting for or taking each other's messages. Timer
workers claim due timers the same way, locking the timers' instance rows
(`FOR UPDATE OF i SKIP LOCKED`): the instance is the lock every writer takes
first, so a worker and a writer of one instance never lock in two orders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from statekit.runner.errors import StoreURLError
from statekit.runner.store.base import Store

SCHEMA_LOCK = 0x5743_4B54  # pg_advisory_xact_lock key serialising migrations


class PostgresStore(Store):
    """A PostgreSQL database (see the module docstring for the locking)."""

    dialect = "postgresql"
    lock_clause = " FOR UPDATE OF i"
    # Dispatchers claim with SKIP LOCKED: concurrent ones pass over each other's rows.
    claim_lock_clause = " FOR UPDATE OF o SKIP LOCKED"
    # Timer workers lock the instance (the lock every writer of it takes first, so there
    # is one lock order) and pass over instances another worker or writer holds.
    timer_lock_clause = " FOR UPDATE OF i SKIP LOCKED"

    def __init__(
        self, url: str, *, connect_timeout: int = 10, check_integrity: bool = True
    ) -> None:
        # `check_integrity` is SQLite's check on open; PostgreSQL checks its pages itself.
        super().__init__(url)
        try:
            import psycopg  # the optional dependency: only PostgreSQL users need it
        except ImportError as exc:
            raise StoreURLError(
                f"{url!r}: PostgreSQL needs psycopg 3: pip install 'statekit[postgres]'"
            ) from exc
        try:
            self._conn = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout)
        except psycopg.Error as exc:
            raise StoreURLError(f"{_safe(url)}: cannot connect: {exc}") from exc
        self._sql: dict[str, str] = {}
        self.migrate()

    @property
    def connection(self) -> Any:
        """The `psycopg.Connection` (autocommit mode; transactions are explicit)."""
        return self._conn

    def _convert(self, sql: str) -> str:
        converted = self._sql.get(sql)
        if converted is None:
            converted = self._sql[sql] = sql.replace("?", "%s")
        return converted

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (`?` placeholders become `%s`); return the cursor."""
        return self._conn.execute(self._convert(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        if len(rows) == 1:
            self._conn.execute(self._convert(sql), rows[0])
        elif rows:
            with self._conn.cursor() as cursor:
                cursor.executemany(self._convert(sql), rows)

    def _control(self, statement: str) -> None:
        self._conn.execute(statement)

    def _open_transaction(self) -> bool:
        return bool(not self._conn.closed)

    @contextmanager
    def write(self) -> Iterator[None]:
        """`BEGIN` … `COMMIT` (rolled back on an exception); rows are locked as read."""
        with self._transaction("BEGIN"):
            yield

    @contextmanager
    def read(self) -> Iterator[None]:
        """A REPEATABLE READ, READ ONLY transaction: one snapshot for several reads."""
        with self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"):
            yield

    def _lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


def _safe(url: str) -> str:
    """The URL without its password (for messages)."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    credentials, host = rest.rsplit("@", 1)
    return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"

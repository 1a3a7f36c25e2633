"""`Store`: the runner's tables behind one database connection, in SQL both dialects share.

A `Store` owns one database connection (use one per thread or process) and
creates and upgrades the schema on open (`migrations`). The SQL is shared and
written with `?` placeholders; each dialect's subclass (`sqlite`, `postgres`)
says how a write transaction starts (and so how writers are serialised), how
a row is locked and how dispatchers claim outbox messages. This module holds
the connection and transaction mechanics (`write`, `read`, nesting, the test
holds); the queries live by group of tables in mixins `Store` inherits
(`schema_queries`, `instance_queries`, `event_queries`, `timer_queries`,
`message_queries`, `family_queries`; `sql_access` says what they use of the store). The runner
calls them inside `store.write()` or `store.read()`; nothing here decides
anything. Rows come and go as the records of `rows`; the statements and the
parameters they take are `statements`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from statekit.runner.store.connection_policy import DEFAULT_POLICY, ConnectionPolicy
from statekit.runner.store.event_queries import EventQueries
from statekit.runner.store.family_queries import FamilyQueries
from statekit.runner.store.hold_points import BEGIN, COMMIT, Hold
from statekit.runner.store.instance_queries import InstanceQueries
from statekit.runner.store.instance_queries import instance_row as instance_row  # postgres
from statekit.runner.store.message_queries import MessageQueries
from statekit.runner.store.schema_queries import SchemaQueries
from statekit.runner.store.timer_queries import TimerQueries


class Store(
    SchemaQueries, InstanceQueries, EventQueries, TimerQueries, MessageQueries, FamilyQueries
):
    """A database holding instances, their histories, outbox, snapshots and inbox."""

    dialect = ""
    lock_clause = ""
    claim_lock_clause = ""
    timer_lock_clause = ""
    message_lock_clause = ""
    hold: Hold | None = None
    """A test's hold on this store's write transactions (`hold_points`); None outside
    tests."""
    borrowed = False
    """Over the application's connection, in its transaction (`Runner.in_transaction`):
    `write()` is a savepoint in it, and a lost connection or a conflict is never retried
    (`retrying`), since the transaction is the application's."""
    policy: ConnectionPolicy = DEFAULT_POLICY
    """How long to wait for the database (`connection_policy`, from the URL's query)."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        self.read_only = read_only
        """Opened by `open_read_only_store`: the connection refuses every write, and the
        schema was checked, never created or upgraded."""

    # ---- what each dialect provides ------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (written with `?` placeholders); return the cursor."""
        raise NotImplementedError

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        raise NotImplementedError

    def _control(self, statement: str) -> None:
        """Run BEGIN / COMMIT / ROLLBACK on the connection as they are written."""
        raise NotImplementedError

    def _open_transaction(self) -> bool:
        """Whether the connection still has a transaction to roll back."""
        raise NotImplementedError

    _depth = 0  # how many `_transaction` blocks are open (nested ones join the outer one)

    def _transaction(self, begin: str, *, writes: bool = False) -> AbstractContextManager[None]:
        """`begin` … COMMIT, rolled back on an exception; a nested block is part of the
        enclosing transaction. `writes`: a write transaction (`hold_points.BEGIN` and
        `COMMIT` are reached in it)."""
        return _Transaction(self, begin, writes)

    def reach(self, point: str) -> None:
        """The write transaction under way is at `point` (`hold_points`): a test's hold,
        when one is installed, runs here."""
        hold = self.hold
        if hold is not None:
            hold(point)

    def write(self) -> AbstractContextManager[None]:
        """A write transaction: committed on exit, rolled back on an exception."""
        raise NotImplementedError

    def read(self) -> AbstractContextManager[None]:
        """A consistent read-only snapshot across several queries."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection."""
        raise NotImplementedError

    def reconnect(self) -> None:
        """Replace a lost connection now rather than before the next transaction
        (PostgreSQL, `connection_policy`); nothing where none is lost (SQLite)."""

    def integrity_problems(self) -> list[str]:
        """What the database's own integrity check finds wrong (empty: sound, or a
        database that checks itself, as PostgreSQL does)."""
        return []

    @property
    def connection(self) -> Any:
        """The DB-API connection (for a consumer's own writes inside `Inbox.process`)."""
        raise NotImplementedError

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    # ---- what each dialect provides for the schema ---------------------------------------
    def _lock_schema(self) -> None:
        """Serialise concurrent migrators (inside the migration transaction)."""

    def _has_table(self, name: str) -> bool:
        """Whether the database has a table called `name`."""
        raise NotImplementedError

    def _display_url(self) -> str:
        """The URL as messages show it (without a password)."""
        return self.url


class _Transaction:
    """`Store._transaction`: a class rather than a generator-based context manager, since
    every event enters one (a generator's machinery cost more than the statements'
    Python); it holds nothing of its own (the depth is the store's), so one object can
    be entered again and again, nested too."""

    __slots__ = ("_begin", "_store", "_writes")

    def __init__(self, store: Store, begin: str, writes: bool) -> None:
        self._store, self._begin, self._writes = store, begin, writes

    def __enter__(self) -> None:
        store = self._store
        if store._depth:
            store._depth += 1
            return
        if self._writes and store.hold is not None:
            store.hold(BEGIN)
        store._control(self._begin)
        store._depth = 1

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        store = self._store
        if store._depth > 1:
            store._depth -= 1
            return
        store._depth = 0
        if kind is not None:
            if store._open_transaction():
                store._control("ROLLBACK")
            return
        try:
            if self._writes and store.hold is not None:
                store.hold(COMMIT)
            store._control("COMMIT")
        except BaseException:  # a failed commit (disk full) leaves nothing half-open
            if store._open_transaction():
                store._control("ROLLBACK")
            raise

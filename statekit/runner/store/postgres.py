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

The one optimistic writer is a runner deciding on the row it committed last
(`runner/row_cache.py`): it sends no locked read, and its version-guarded
UPDATE (which also checks the row's chart digest and state texts) is the first
statement of its transaction, so it takes the row lock there, in the same order
as a locking writer. When the row moved on, that UPDATE fails, the transaction
rolls back, and the runner reads the row under the lock and decides again, so
the caller never sees the retry. Under contention on one instance this costs
the loser one wasted step, and the runner then reads first until it sees that
nobody else wrote in between.

Outbox: dispatchers claim with `FOR UPDATE SKIP LOCKED`, so several of them
poll at once without waiting for or taking each other's messages. Timer
workers claim due timers the same way, locking the timers' instance rows
(`FOR UPDATE OF i SKIP LOCKED`): the instance is the lock every writer takes
first, so a worker and a writer of one instance never lock in two orders.

Round trips: a transaction's `BEGIN` is not sent on its own but with the
transaction's first statement, and `write_decided` sends all of a decision's
writes as one query of several statements, with the `COMMIT` when the caller
says nothing follows (`last`): an event costs two round trips, the locked read
and the writes with the commit; one on the cached path. Those queries bind their
parameters on the client (each value quoted as a literal of its type) and go by
the simple query protocol, which takes several statements in one message;
psycopg's pipeline mode does the same in one round trip but costs the client
several times the CPU (it flushes and polls the socket after every statement).
The statements of one query cannot look at each other's row counts, so the
instance update's version check is made an error inside the database
(`statekit_moved`, schema 6): a stale write fails the query, the server skips
the rest of it (the `COMMIT` too) and the transaction is rolled back, never
committed. An instance row is never deleted, so the update always finds the row
it checks. The query's text (parameters bound as literals, the checked instance
update) is made by `store.postgres_query_text`; connecting and the driver's errors
as statekit's: `store.postgres_connect` and `store.connection_policy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import replace
from typing import Any

from statekit.runner.errors import StoreUnavailableError, StoreURLError
from statekit.runner.store.base import Store, instance_row
from statekit.runner.store.connection_policy import (
    CONFLICT,
    CommitUnknown,
    NotCommitted,
    TransactionInterrupted,
    failure_kind,
    split_policy,
)
from statekit.runner.store.migrations_v3_v6 import STALE_VERSION
from statekit.runner.store.postgres_connect import connect, safe_url, unavailable
from statekit.runner.store.postgres_query_text import bound_text, checked_move
from statekit.runner.store.rows import DecidedRows, InstanceRow
from statekit.runner.store.statements import (
    SELECT_LOCKED_INSTANCE,
    SELECT_RECORDED,
    decided_statements,
    move_values,
)

POSTGRES_REQUIREMENT = "psycopg[binary]>=3.1,<3.4"
"""What the `postgres` extra installs (pyproject.toml); statekit is on no package index, so a
missing driver is installed by this requirement, not by the extra's name."""
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
    # A message between instances is locked before its receiver: a second deliverer waits,
    # then finds it delivered.
    message_lock_clause = " FOR UPDATE OF m"
    _end_statement = "COMMIT"
    """What ends a write transaction sent with its last writes (`write_decided`)."""

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float | None = None,
        retry_for: float | None = None,
        check_integrity: bool = True,
        read_only: bool = False,
    ) -> None:
        # `check_integrity` is SQLite's check on open; PostgreSQL checks its pages itself.
        # `connect_timeout` and `retry_for`, when given, override the URL's
        # (`connection_policy`, which also takes them out of the URL libpq is given).
        super().__init__(url, read_only=read_only)
        policy, self._libpq_url = split_policy(url, safe_url(url))
        if connect_timeout is not None:
            policy = replace(policy, connect_timeout=connect_timeout)
        if retry_for is not None:
            policy = replace(policy, retry_for=retry_for)
        self.policy = policy
        # one reusable object each (as SQLite's): no generator per transaction
        self._writer = self._transaction("BEGIN ISOLATION LEVEL READ COMMITTED", writes=True)
        self._reader = self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            import psycopg  # the optional dependency: only PostgreSQL users need it
        except ImportError as exc:
            raise StoreURLError(
                f"{url!r}: PostgreSQL needs psycopg 3 (statekit's `postgres` extra): "
                f"pip install {POSTGRES_REQUIREMENT!r}"
            ) from exc
        self._psycopg = psycopg
        self._use(psycopg, self._connect(opening=True))
        deadline = self.policy.deadline()
        while True:  # a server restarting as we open: the schema check or migration again
            try:
                if read_only:
                    self.check_schema()
                else:
                    self.migrate()
                return
            except TransactionInterrupted as exc:
                if deadline.wait():
                    continue
                self._conn.close()
                raise self._unavailable(exc) from exc
            except BaseException:
                self._conn.close()
                raise

    def _use(self, psycopg: Any, conn: Any) -> None:
        """Start the bookkeeping of a store over `conn` (an autocommit connection of its
        own, or the application's: `borrowed_postgres`)."""
        self._errors = psycopg.Error
        self._psycopg = psycopg
        self._tuples = psycopg.rows.tuple_row  # rows by position, whatever the connection's
        self._sql: dict[str, str] = {}
        self._moves: dict[str, tuple[str, int]] = {}  # `_checked`: an update's form, once
        self._begin: str | None = None  # a BEGIN not sent yet: it goes with the next statement
        self._committed = False  # `write_decided(last=True)` committed the open transaction
        self._broken = False  # the connection was lost: a new one is made before the next use
        self._written: list[DecidedRows] = []  # what the open transaction wrote (`_interrupted`)
        # a statement (`%s` placeholders) as a `%` format, with its number of parameters
        self._templates: dict[str, tuple[int, str]] = {}
        self._conn = conn
        self._client = psycopg.ClientCursor(conn)  # `_send_query`'s statements

    def _connect(self, *, opening: bool = False) -> Any:
        """A new connection (`postgres_connect.connect`)."""
        return connect(
            self._psycopg, self._libpq_url, self.url, self.policy,
            read_only=self.read_only, opening=opening,
        )  # fmt: skip

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        return unavailable(self.url, self.policy, exc)

    def _interrupted(self, exc: Exception, *, commit: bool) -> TransactionInterrupted | None:
        """`exc` (the driver's) as the runner sees it: None when it is not a lost connection
        or a conflict the server rolled back (raise it as it is); otherwise `NotCommitted`,
        or `CommitUnknown` when the connection was lost with the COMMIT on its way
        (`commit`). The store's transaction state is reset, and a lost connection is
        replaced before the next transaction (`_heal`)."""
        kind = failure_kind(exc)
        if kind is None:
            return None
        written = tuple(self._written)
        self._written = []
        self._begin, self._committed = None, False
        words = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if kind == CONFLICT:  # the transaction is aborted; its block rolls it back
            return NotCommitted(
                f"{safe_url(self.url)}: the server rolled the transaction back ({words})", written
            )
        self._broken = True
        with suppress(Exception):
            self._conn.close()
        if commit:
            return CommitUnknown(
                f"{safe_url(self.url)}: the connection was lost while committing ({words})", written
            )
        return NotCommitted(f"{safe_url(self.url)}: the connection was lost ({words})", written)

    def _heal(self) -> None:
        """After a lost connection: a new one when no transaction is open (its attempts
        retried as `_connect` does), else `NotCommitted` (the open transaction is gone;
        its block ends it, and the next one reconnects)."""
        if self._depth:
            raise NotCommitted(
                f"{safe_url(self.url)}: the connection was lost earlier in this transaction"
            )
        self._conn = self._connect()
        self._client = self._psycopg.ClientCursor(self._conn, row_factory=self._tuples)
        self._broken = False

    def reconnect(self) -> None:
        """Replace a lost connection now (rather than at the next statement); nothing
        when the connection is working or a transaction is open."""
        if self._broken and not self._depth:
            self._heal()

    def _has_table(self, name: str) -> bool:
        row = self.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()
        return bool(row[0])

    def _display_url(self) -> str:
        return safe_url(self.url)

    @property
    def connection(self) -> Any:
        """The `psycopg.Connection` (autocommit mode; transactions are explicit). Inside a
        `write()` or `read()` block the transaction has begun by the time it is given
        (a BEGIN held back for the first statement is sent first); a lost connection is
        replaced first when no transaction is open (`_heal`)."""
        if self._broken:
            self._heal()
        if self._begin is not None:
            begin, self._begin = self._begin, None
            try:
                self._conn.execute(begin)
            except self._errors as exc:
                lost = self._interrupted(exc, commit=False)
                if lost is None:
                    raise
                raise lost from exc
        return self._conn

    def _convert(self, sql: str) -> str:
        converted = self._sql.get(sql)
        if converted is None:
            converted = self._sql[sql] = sql.replace("?", "%s")
        return converted

    def _check_open(self) -> None:
        if self._committed:
            raise RuntimeError("a statement after write_decided(last=True) committed it")
        if self._broken:
            self._heal()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (`?` placeholders become `%s`); return the cursor. A BEGIN
        not sent yet goes with it, in one round trip."""
        self._check_open()
        try:
            if self._begin is None:
                cursor = self._conn.cursor(row_factory=self._tuples)
                return cursor.execute(self._convert(sql), params)
            begin, self._begin = self._begin, None
            # one query of two statements, as `_send_query` sends its writes; the cursor is
            # left on the second one's result
            cursor = self._psycopg.ClientCursor(self._conn, row_factory=self._tuples)
            cursor.execute(f"{begin};\n{self._bound(self._convert(sql), params)}")
        except self._errors as exc:
            lost = self._interrupted(exc, commit=False)
            if lost is None:
                raise
            raise lost from exc
        cursor.nextset()
        return cursor

    def instance(
        self, instance_id: str, event_id: str | None = None, *, lock: bool = False
    ) -> InstanceRow | None:
        """`Store.instance`; a locked read with an event ID is two statements in one query
        (one round trip): the row locked (`SELECT_LOCKED_INSTANCE`), then the record
        (`SELECT_RECORDED`). Under READ COMMITTED a `SELECT … FOR UPDATE` that waited
        for the row re-reads only the locked row after the wait, and a record joined to
        it would be the one of the statement's snapshot, taken before the wait: a
        redelivery of an event committed meanwhile would find it unrecorded and be
        decided again (a spurious rejection, or a duplicate refused by the unique
        index). The second statement takes its snapshot once the lock is held, so it
        sees every event committed before the lock was granted."""
        if not lock or event_id is None:
            return super().instance(instance_id, event_id, lock=lock)
        self._check_open()
        bound = self._bound
        locked = bound(self._convert(SELECT_LOCKED_INSTANCE + self.lock_clause), (instance_id,))
        record = bound(self._convert(SELECT_RECORDED), (instance_id, event_id))
        begin, self._begin = self._begin, None
        parts = [locked, record] if begin is None else [begin, locked, record]
        cursor = self._psycopg.ClientCursor(self._conn, row_factory=self._tuples)
        try:
            cursor.execute(";\n".join(parts))
        except self._errors as exc:
            lost = self._interrupted(exc, commit=False)
            if lost is None:
                raise
            raise lost from exc
        if begin is not None:
            cursor.nextset()
        row = cursor.fetchone()
        cursor.nextset()
        recorded = cursor.fetchone()
        return None if row is None else instance_row(row, recorded)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row (one round trip: one query)."""
        if len(rows) == 1:
            self.execute(sql, rows[0])
        elif rows:
            self._send_query([], [(self._convert(sql), rows)], last=False)

    def write_decided(self, rows: DecidedRows, *, last: bool = False) -> bool:
        """`Store.write_decided` as one query (one round trip), with the COMMIT when
        `last`; False (and nothing committed) when an instance was no longer as read."""
        self._check_open()
        self._written.append(rows)
        moves = [self._checked(*move_values(move)) for move in rows.moves]
        statements = [(self._convert(sql), params) for sql, params in decided_statements(rows)]
        try:
            # with a test's hold installed, the COMMIT goes on its own (`hold_points.COMMIT`)
            self._send_query(moves, statements, last=last and self.hold is None)
        except self._errors as exc:
            if getattr(exc, "sqlstate", None) == STALE_VERSION:
                return False
            raise
        return True

    def _checked(self, update: str, params: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        """An instance update and its parameters as a checked move (`checked_move`)."""
        return checked_move(self._moves, self._convert, update, params)

    def _send_query(
        self,
        moves: Sequence[tuple[str, Sequence[Any]]],
        statements: Sequence[tuple[str, Sequence[Sequence[Any]]]],
        *,
        last: bool,
    ) -> None:
        """Send the instance moves, then the statements (with a BEGIN not sent yet, and the
        COMMIT when `last`) as one query and wait for it: the first error raises, and the
        server skips every statement after it.

        One query of several statements, not psycopg's pipeline mode: the simple query
        protocol takes statements joined by `;` in one message, with their parameters
        bound on the client as literals of their types (`_bound`). Measured on loopback,
        the raw three-write transaction sent this way costs the client about a quarter
        of the CPU it costs as a pipeline (which flushes and polls the socket after
        every statement), in the same one round trip."""
        templates, client = self._templates, self._client  # `bound_text` called directly
        begin, self._begin = self._begin, None
        parts = [] if begin is None else [begin]
        parts.extend(bound_text(templates, client, sql, params) for sql, params in moves)
        for sql, param_rows in statements:
            parts.extend(bound_text(templates, client, sql, params) for params in param_rows)
        if last:
            parts.append(self._end_statement)
        if self._broken:
            self._heal()
        try:
            self._client.execute(";\n".join(parts))
        except self._errors as exc:
            lost = self._interrupted(exc, commit=last)
            if lost is None:
                raise
            raise lost from exc
        self._committed = last

    def _bound(self, sql: str, params: Sequence[Any]) -> str:
        """`sql` (`%s` placeholders) with `params` bound as literals (`bound_text`)."""
        return bound_text(self._templates, self._client, sql, params)

    def _control(self, statement: str) -> None:
        if statement.startswith("BEGIN"):
            if self._broken:  # a lost connection is replaced before a transaction begins
                self._heal()
            self._begin, self._committed = statement, False  # sent with the first statement
            if self._written:
                self._written = []
            return
        if self._begin is not None:  # nothing ran: there is no transaction to end
            self._begin = None
            return
        if self._committed:  # write_decided(last=True) committed it already
            self._committed = False
            return
        commit = statement == "COMMIT"
        if self._broken:  # lost earlier in this transaction: nothing of it was committed
            if commit:
                raise NotCommitted(f"{safe_url(self.url)}: the connection was lost before COMMIT")
            return
        try:
            self._conn.execute(statement)
        except self._errors as exc:
            lost = self._interrupted(exc, commit=commit)
            if lost is None:
                raise
            if commit or not self._broken:
                raise lost from exc
            # a ROLLBACK on a lost connection: the server rolled the transaction back

    def _open_transaction(self) -> bool:
        if self._begin is not None or self._committed:
            return True  # `_control` ends it without a round trip
        return bool(not self._conn.closed)

    def write(self) -> AbstractContextManager[None]:
        """`BEGIN` … `COMMIT` (rolled back on an exception); rows are locked as read."""
        return self._writer

    def read(self) -> AbstractContextManager[None]:
        """A REPEATABLE READ, READ ONLY transaction: one snapshot for several reads."""
        return self._reader

    def _lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

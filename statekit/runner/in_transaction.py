"""`Runner.in_transaction(connection)`: the runner writing in the application's transaction.

    with runner.in_transaction(conn) as tx:      # conn: sqlite3, psycopg, SQLAlchemy
        tx.create("pay-1")
        tx.apply("pay-1", "evt-1", "START_PAY", {"amount": 2500})
    conn.commit()                                # the application's commit: all or nothing

The block yields a copy of the runner (its chart, older charts, clock, snapshots,
timer problems) whose store is the application's connection
(`store.borrowed.borrowed_store`): every method decides and writes through the one write
path (`write_path`), and each public call is one savepoint in the application's
transaction, never retried (`retrying`). The copy never decides on a row it remembers
(`row_cache.ReadFirst`): the instance is read locked every time, since a row written in
a transaction the application may roll back is not the stored row until it commits;
the runner's own cache is not touched, and when this transaction commits, the
version-guarded update of the runner's next unread write finds its remembered row stale
(`row_cache`).

On entry the connection is checked: a driver this block knows, a transaction
statekit's rows can join, the runner's own store's database (`store_identity`: the
same SQLite file, or the same PostgreSQL cluster and database; else
`StoreMismatchError`, before anything is written), statekit's tables at this
statekit's schema version, and the runner's chart registered there (the identity, the
schema and the chart are asked once: the identity per connection object, the schema
and the chart per database, `store_identity`; so on PostgreSQL a block's entry costs
no round trip after a connection's first). The asynchronous
twin (`statekit.aio`) makes the same checks.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar

from statekit.engine.chart import Chart
from statekit.runner.chart_versions import ChartSet
from statekit.runner.errors import NoStoreError, StoreMismatchError
from statekit.runner.family_charts import FamilyCharts
from statekit.runner.retrying import aborted
from statekit.runner.row_cache import ReadFirst
from statekit.runner.store.base import Store
from statekit.runner.store.borrowed import borrowed_store
from statekit.runner.store.connection_policy import TransactionInterrupted
from statekit.runner.store.store_identity import (
    Identity,
    charts_found,
    describe,
    store_identity,
)
from statekit.runner.write_path import WritePath


class Borrowing(Protocol):
    """What `in_transaction` needs of a `Runner`."""

    chart: Chart
    charts: ChartSet
    store: Store
    _path: WritePath

    def now_ms(self) -> int:
        """The clock's reading."""
        ...


R = TypeVar("R", bound=Borrowing)


@contextmanager
def in_transaction(runner: R, connection: object) -> Iterator[R]:
    """A copy of `runner` writing on `connection` in its transaction, for the block (see
    the module docstring); the copy refuses any use once the block has ended."""
    store = borrowed_store(connection)
    chart = runner.chart
    try:
        store.enter()  # a transaction to join (SQLite: its write lock taken first)
        identity = _check_same_database(runner.store, store)
        # what an earlier block on this database checked (none for an unknown kind of store)
        known = charts_found(identity) if identity is not None else set()
        found = chart.digest in known or _schema_and_chart(runner.store, store, chart)
    except TransactionInterrupted as interrupted:  # lost, or rolled back by the server
        raise aborted(interrupted) from interrupted
    if not found:
        raise StoreMismatchError(
            f"{store._display_url()} does not hold chart {chart.name!r} version "
            f"{chart.version} ({chart.digest}), which the runner registered in its store at "
            f"{runner.store._display_url()}: the application's connection must be to the "
            "runner's database"
        )
    known.add(chart.digest)
    twin = copy.copy(runner)
    twin.store = store
    twin._path = WritePath(
        store, chart, runner.charts, snapshot_every=runner._path.snapshot_every,
        now_ms=runner.now_ms, family=FamilyCharts(runner._path.family.given, store),
    )  # fmt: skip
    twin._path.rows = ReadFirst()
    try:
        yield twin
    finally:
        store.end()


def _check_same_database(own: Store, borrowed: Store) -> Identity | None:
    """The identity of the database both are to; `StoreMismatchError` unless `borrowed`
    (the application's connection) is to the database of `own` (the runner's store);
    None when `own` is of a kind whose identity is unknown."""
    expected = store_identity(own)
    if expected is None:
        return None
    found = store_identity(borrowed)
    if found != expected:
        raise StoreMismatchError(
            f"the application's connection is to {describe(found or ('?', '?'))}, not to "
            f"the runner's store at {own._display_url()} ({describe(expected)}): the "
            "application's connection must be to the runner's database, else statekit's "
            "rows would go into another one"
        )
    return found


def _schema_and_chart(own: Store, borrowed: Store, chart: Chart) -> bool:
    """Whether the application's database has statekit's tables at this schema version
    (else `NoStoreError` / `SchemaVersionError`) and `chart` registered."""
    try:
        borrowed.check_schema()
    except NoStoreError as exc:
        raise NoStoreError(
            f"{exc}; here the application's connection must be to the runner's "
            f"database, {own._display_url()}"
        ) from exc
    found = borrowed.execute(
        "SELECT 1 FROM statekit_charts WHERE digest = ?", (chart.digest,)
    ).fetchone()
    return found is not None

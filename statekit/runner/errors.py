"""The runner's errors: each one says what is wrong in words, never as a bare traceback.

They all derive from `RunnerError`. An event is never an error (it always
ends in an `Outcome`); these are for a missing instance, a chart or schema
that does not fit the stored data, a corrupt row or a bad store URL.
"""

from __future__ import annotations

from statekit.compiler.ir import CompiledChart

BUMP_VERSION = "a changed chart needs a new version (bump `version:`, then `statekit migrate`)"
"""What every message refusing a changed chart of a stored version tells to do."""


class RunnerError(Exception):
    """Base class of the durable runner's errors."""


class StoreURLError(RunnerError, ValueError):
    """`open_store` was given a URL it cannot use (unknown scheme, missing path...)."""


class NoStoreError(RunnerError):
    """A store opened to be read is not there: no such database file, or a database
    without statekit's tables. Nothing was created."""


class SchemaVersionError(RunnerError):
    """The database schema is newer than this statekit knows, or a migration failed."""


class UnknownInstanceError(RunnerError, KeyError):
    """No instance with this ID exists in the store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown instance"


class InstanceExistsError(RunnerError):
    """`create` was asked for an instance ID that is already taken."""


class ChartVersionError(RunnerError):
    """The stored instance does not fit the runner's chart: another chart, an unknown
    chart version, or a configuration naming a state the current chart no longer has."""


class ChangedVersionError(ChartVersionError):
    """A chart given for a name and version the store holds with another digest.

    `changed` is that chart's IR and `stored` the stored version's (None when the store
    kept no source that compiles to its digest), so that a caller that may run the
    analysis (the CLI) can say what changed; the runner itself does not.
    """

    def __init__(self, message: str, changed: CompiledChart, stored: CompiledChart | None):
        super().__init__(message)
        self.changed = changed
        self.stored = stored


class IdentifierBoundError(RunnerError, ValueError):
    """The chart names an event or a timer longer than the identifier bound
    (`identifier_bounds.MAX_ID_BYTES`): the events and timers it delivers could not be
    stored alike on every store."""


class FamilyBoundError(RunnerError):
    """`Runner.create` of a root whose initial family step made more deliveries between
    its members than the bound (`FAMILY_BOUND`, e.g. a chart that invokes itself from its
    initial state): nothing was created."""


class CorruptRowError(RunnerError):
    """A stored row cannot be read back (bad JSON, text that is not UTF-8, a state that
    does not fit its chart, a broken history)."""


class StoreBusyError(RunnerError):
    """The database stayed locked by another writer for longer than the busy timeout."""


class StoreFailure(RunnerError):
    """The database itself cannot go on (full, damaged): whoever writes must stop."""


class StoreFullError(StoreFailure):
    """The disk (or the database's size limit) is full; nothing of the failed write
    was kept."""


class DamagedStoreError(StoreFailure):
    """The database file is damaged (its integrity check fails, a page cannot be read);
    one unreadable row (a text that is not UTF-8) is a `CorruptRowError` instead."""


class ShardLayoutError(RunnerError):
    """The stores given as a shard set are not the set their databases record (another
    order, a shard missing or added, another set's database, one given twice), or a
    database cannot join it: routing by them would put instances in the wrong database.
    Nothing was routed; the message says which database and what to give instead."""


class StoreUnavailableError(StoreFailure):
    """The database server could not be reached (refused, lost, starting, full) for longer
    than the store URL's `retry_for`; the message says what failed and what to do. A
    transaction interrupted by it was not committed, or its outcome was resolved first."""


class UnsupportedConnectionError(RunnerError, TypeError):
    """`Runner.in_transaction` was given something it cannot write in: not a `sqlite3`,
    psycopg 3 or SQLAlchemy connection (or ORM session), or one over another driver."""


class NotInTransactionError(RunnerError):
    """The application's connection given to `Runner.in_transaction` is not in a
    transaction that statekit's rows could join (autocommit with none open, or one that
    failed): they would commit on their own. Nothing was written."""


class StoreMismatchError(RunnerError):
    """The application's connection is to a database that is not the runner's store (it
    does not hold the runner's chart): open the `Runner` over a store at that database."""


class TransactionAbortedError(RunnerError):
    """The application's transaction that `Runner.in_transaction` wrote in cannot commit
    any more: the server rolled it back in a conflict (a serialization failure, a
    deadlock), the connection was lost, or a deferred SQLite transaction cannot take the
    write lock. Nothing of it will commit: roll it back and, when `retryable`, run the
    whole transaction again."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable

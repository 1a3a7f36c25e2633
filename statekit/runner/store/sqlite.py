"""The SQLite store (standard library `sqlite3`).

Locking: SQLite has one writer at a time per database. Every write
transaction starts with `BEGIN IMMEDIATE`, which takes the write lock before
the instance row is read, so read → decide → write runs alone and the
version read is still the version written (the version-guarded UPDATE is a
second check, never the mechanism). A deferred `BEGIN` would read under a
shared lock and then try to upgrade it: two processes doing that block each
other and SQLite answers "database is locked" at once, without waiting for
the busy timeout (measured: 2.6 M retries with 4 processes, zero with
IMMEDIATE). WAL lets readers (load, history, verify) run beside the writer;
the busy timeout makes writers queue instead of failing; `synchronous=FULL`
makes each commit durable (an acknowledged event survives a power cut, not
only a killed process). The connection uses `isolation_level=None` so that
Python's sqlite3 never opens or commits a transaction behind our back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from statekit.runner.errors import (
    CorruptRowError,
    DamagedStoreError,
    NoStoreError,
    RunnerError,
    StoreBusyError,
    StoreFailure,
    StoreFullError,
    StoreURLError,
)
from statekit.runner.store.base import Store
from statekit.runner.store.migrations_v3_v6 import unhex
from statekit.runner.store.packing import migrated_evidence, migrated_hash
from statekit.runner.store.timer_records import timer_counter, timer_record

SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_BUSY, _LOCKED, _IOERR, _CORRUPT, _FULL, _NOTADB = 5, 6, 10, 11, 13, 26  # SQLite result codes


def _translated(exc: sqlite3.Error, where: str, busy: float) -> RunnerError | None:
    """The runner's error for a failure of the database itself (busy, full, damaged) or
    of a row (text that is not UTF-8); None for anything else (a constraint, a bug),
    which is raised as it is."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_BUSY, _LOCKED):
        return StoreBusyError(
            f"{where}: the database was busy (locked by another connection) for longer than "
            f"the busy timeout ({busy:g} s); nothing was written: retry, or allow a longer "
            "wait with ?busy_timeout=SECONDS in the store URL"
        )
    if code == _FULL:
        return StoreFullError(
            f"disk full: {where} cannot grow ({exc}); nothing of the failed transaction was "
            "kept: free space (or raise the size limit) and run again"
        )
    if code in (_CORRUPT, _NOTADB):
        return DamagedStoreError(
            f"{where} is damaged ({exc}): run `statekit verify` to see what can be read, "
            "and restore it from a backup"
        )
    if code == _IOERR:
        return StoreFailure(f"{where}: the disk failed to read or write the database ({exc})")
    if isinstance(exc, sqlite3.OperationalError) and str(exc).startswith("Could not decode"):
        # one row is damaged, not the file: whoever reads it stops, the others go on
        return CorruptRowError(f"{where}: a stored text is not UTF-8 ({exc})")
    return None


class _Cursor:
    """A `sqlite3.Cursor` whose fetches raise the runner's errors for a damaged database."""

    __slots__ = ("_cursor", "_store")

    def __init__(self, cursor: sqlite3.Cursor, store: SQLiteStore) -> None:
        self._cursor = cursor
        self._store = store

    @property
    def rowcount(self) -> int:
        """Rows changed by the statement."""
        return self._cursor.rowcount

    def fetchone(self) -> Any:
        """The next row, or None."""
        try:
            return self._cursor.fetchone()
        except sqlite3.Error as exc:
            raise self._store.translate(exc) from exc

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        try:
            return self._cursor.fetchall()
        except sqlite3.Error as exc:
            raise self._store.translate(exc) from exc

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class SQLiteStore(Store):
    """A SQLite database file in WAL mode (see the module docstring for the locking)."""

    dialect = "sqlite"
    # No claim clause: claims run under the write lock (BEGIN IMMEDIATE), so one
    # dispatcher claims at a time, and a claim holds its messages (and with them
    # their instances' later ones) until settled or until the lease expires.

    def __init__(
        self,
        url: str,
        path: str,
        options: Mapping[str, Any] | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        super().__init__(url, read_only=read_only)
        options = dict(options or {})
        synchronous = str(options.pop("synchronous", "FULL")).upper()
        if synchronous not in SYNCHRONOUS:
            raise StoreURLError(f"{url!r}: synchronous must be one of {', '.join(SYNCHRONOUS)}")
        try:
            busy = float(options.pop("busy_timeout", 60.0))
        except ValueError as exc:
            raise StoreURLError(f"{url!r}: busy_timeout must be a number of seconds") from exc
        check = str(options.pop("check_integrity", True)).lower() not in ("0", "false", "off")
        if options:
            raise StoreURLError(f"{url!r}: unknown SQLite options {sorted(options)}")
        self.path = path
        self.busy_timeout = busy
        self._writer = self._transaction("BEGIN IMMEDIATE", writes=True)
        self._reader = self._transaction("BEGIN")
        folder = Path(path).parent
        for part in [folder, *folder.parents] if path != ":memory:" else []:
            if part.is_file():
                raise StoreURLError(
                    f"{url!r}: cannot open the database: {part} is a file, not a folder"
                )
            if part.is_dir():
                break
        self._conn = self._connect_reader() if read_only else self._connect(path)
        try:  # connect() opens lazily: a file that is not a database fails here
            if read_only:  # a write statement fails; the file's journal mode stays as it is
                self._conn.execute("PRAGMA query_only=ON")
            else:
                if path != ":memory:":
                    self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(f"PRAGMA synchronous={synchronous}")
            self._conn.execute(f"PRAGMA busy_timeout={int(busy * 1000)}")
            self._conn.create_function("statekit_unhex", 1, unhex, deterministic=True)
            for name, function in (("statekit_pack_hash", migrated_hash),
                                   ("statekit_pack_evidence", migrated_evidence)):  # fmt: skip
                self._conn.create_function(name, 3, function, deterministic=True)
            self._conn.create_function("statekit_timer_record", 2, timer_record)
            self._conn.create_function("statekit_timer_counter", 1, timer_counter)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            error = self.translate(exc)
            not_a_database = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF == _NOTADB
            if isinstance(error, RunnerError) and not not_a_database:
                raise error from exc
            raise StoreURLError(f"{url!r}: cannot open the database: {exc}") from exc
        try:
            if read_only and self._is_not_a_database():
                raise NoStoreError(
                    f"no statekit store at {url}: the file is not a SQLite database; check the path"
                )
            if check and path != ":memory:":
                problems = self.integrity_problems()
                if problems:
                    raise DamagedStoreError(
                        f"{self._where}: the integrity check failed ({'; '.join(problems[:3])}):"
                        " nothing is written to a damaged database; run `statekit verify` to "
                        "see what can be read, and restore it from a backup"
                    )
            if read_only:
                self.check_schema()
            else:
                self.migrate()
        except RunnerError:
            self._conn.close()
            raise

    def _connect(self, path: str) -> sqlite3.Connection:
        """A connection that creates the file when it is missing (writers)."""
        try:
            return sqlite3.connect(
                path, isolation_level=None, timeout=self.busy_timeout, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreURLError(f"{self.url!r}: cannot open the database: {exc}") from exc

    def _connect_reader(self) -> sqlite3.Connection:
        """A connection to a file that exists, never creating it (`NoStoreError` when it is
        missing). Opened `mode=rw` with `query_only` (set by the caller), not `mode=ro`:
        a read-only connection to a WAL database leaves its `-wal` and `-shm` files
        behind, where the last read-write connection to close removes them; a file
        this process may not write is opened `mode=ro`."""
        if self.path == ":memory:":
            raise NoStoreError(
                f"no statekit store at {self.url}: an in-memory database is always empty"
            )
        target = "file:" + quote(str(Path(self.path).absolute()))
        for mode in ("rw", "ro"):
            try:
                return sqlite3.connect(
                    f"{target}?mode={mode}",
                    uri=True,
                    isolation_level=None,
                    timeout=self.busy_timeout,
                    check_same_thread=False,
                )
            except sqlite3.Error as exc:
                if not Path(self.path).exists():
                    raise NoStoreError(
                        f"no statekit store at {self.url}: check the path, or run "
                        "`statekit run` to create one"
                    ) from exc
                if mode == "ro":
                    raise StoreURLError(f"{self.url!r}: cannot open the database: {exc}") from exc
        raise AssertionError("unreachable")

    def _is_not_a_database(self) -> bool:
        """Whether the file is not a SQLite database at all (its header is not one)."""
        try:
            self._conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF == _NOTADB
        return False

    def _has_table(self, name: str) -> bool:
        row = self.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    @property
    def _where(self) -> str:
        return f"the SQLite database {self.path}"

    def translate(self, exc: sqlite3.Error) -> Exception:
        """The runner's error for `exc` when it is a failure of the database itself (busy,
        full, damaged, unreadable text), else `exc` itself."""
        return _translated(exc, self._where, self.busy_timeout) or exc

    def integrity_problems(self) -> list[str]:
        """What SQLite's `PRAGMA quick_check` finds wrong (empty when the file is sound)."""
        try:
            rows = self._conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [str(r[0]) for r in rows if r[0] != "ok"]

    @property
    def connection(self) -> sqlite3.Connection:
        """The `sqlite3.Connection` (autocommit mode; transactions are explicit)."""
        return self._conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        """Run one statement; return the cursor (its fetches raise `DamagedStoreError` for
        a damaged page or undecodable text)."""
        try:
            return _Cursor(self._conn.execute(sql, params), self)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        try:
            if len(rows) == 1:
                self._conn.execute(sql, rows[0])
            else:
                self._conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    def _control(self, statement: str) -> None:
        try:
            self._conn.execute(statement)
        except sqlite3.Error as exc:
            raise self.translate(exc) from exc

    def _open_transaction(self) -> bool:
        return bool(self._conn.in_transaction)

    def write(self) -> AbstractContextManager[None]:
        """`BEGIN IMMEDIATE` … `COMMIT` (rolled back on an exception)."""
        return self._writer

    def read(self) -> AbstractContextManager[None]:
        """A deferred transaction: one WAL snapshot for several reads."""
        return self._reader

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

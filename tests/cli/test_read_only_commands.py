"""The commands that only read a store never create, upgrade or write one.

`verify`, `timers`, `outbox` and `migrate --dry-run` open the store with
`open_read_only_store`: a path with a typo, a file or database that is not a
statekit store, or a store of an older schema is refused with exit 2 and a message
saying so, and the database is left exactly as it was (the SQLite folder's files
byte for byte; PostgreSQL's databases, tables and rows). A sound store is read and
left as it was too. Each command runs as a user runs it, in a fresh process.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from cli_process import statekit
from runner_charts import MACHINES
from store_legacy import before_schema_6

from statekit.runner.store import open_read_only_store, open_store
from statekit.runner.store.migrations import LATEST

ROOT = Path(__file__).resolve().parents[2]
PAYMENT = str(MACHINES / "payment.yaml")
EVENTS = ROOT / "examples" / "payment-events.jsonl"

COMMANDS: dict[str, list[str]] = {
    "verify": ["verify"],
    "timers": ["timers"],
    "outbox": ["outbox"],
    "migrate --dry-run": ["migrate", "--chart", PAYMENT, "--dry-run"],
}

NO_STORE = "no statekit store at "
NO_TABLES = "the database has no statekit tables"
OLDER = f"older than this statekit's ({LATEST}), and reading never upgrades it"


def filled(url: str) -> None:
    """A store written by `statekit run` (instances, history, outbox messages)."""
    done = statekit("run", PAYMENT, "--db", url, "--input", str(EVENTS))
    assert done.returncode == 0, done.stdout + done.stderr


def downgraded(url: str) -> None:
    """A sound store, turned back into the form schema 5 had."""
    filled(url)
    with open_store(url) as store:
        before_schema_6(store)


# ---- SQLite: the folder's files, byte for byte ------------------------------------------


def sqlite_state(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def _other_app(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.execute("INSERT INTO notes (body) VALUES ('mine')")
    connection.close()


SQLITE_CASES: dict[str, tuple[Callable[[Path], object], int, list[str]]] = {
    # name → (make the file, exit code, what standard error says)
    "missing": (lambda path: None, 2, [NO_STORE, "check the path, or run `statekit run`"]),
    "an empty file": (lambda path: path.write_bytes(b""), 2, [NO_STORE, NO_TABLES]),
    "another app's database": (_other_app, 2, [NO_STORE, NO_TABLES]),
    "a text file": (
        lambda path: path.write_text("not a database\n" * 20),
        2,
        [NO_STORE, "not a SQLite database"],
    ),
    "a store of schema 5": (lambda path: downgraded(f"sqlite:///{path}"), 2, [OLDER]),
    "a sound store": (lambda path: filled(f"sqlite:///{path}"), 0, []),
}


@pytest.mark.parametrize("case", list(SQLITE_CASES))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_sqlite_reader_creates_and_changes_nothing(
    tmp_path: Path, command: str, case: str
) -> None:
    folder = tmp_path / "stores"
    folder.mkdir()
    path = folder / "typo.db"
    make, code, says = SQLITE_CASES[case]
    make(path)
    before = sqlite_state(folder)
    url = f"sqlite:///{path}"
    done = statekit(*COMMANDS[command], "--db", url)
    assert done.returncode == code, done.stdout + done.stderr
    for words in says:
        assert words in done.stderr, done.stderr
    if code == 2:
        assert f"{NO_STORE}{url}" in done.stderr or OLDER in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert sqlite_state(folder) == before


# ---- PostgreSQL: the databases, their tables and every row ------------------------------


def _admin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/postgres"))


def pg_state(url: str) -> dict[str, Any]:
    """The server's databases, and the database's tables with a digest of their rows."""
    with psycopg.connect(_admin(url), autocommit=True) as admin:
        databases = sorted(r[0] for r in admin.execute("SELECT datname FROM pg_database"))
    state: dict[str, Any] = {"databases": databases}
    name = urlsplit(url).path.lstrip("/")
    if name not in databases:
        return state
    with psycopg.connect(url, autocommit=True) as connection:
        tables = [
            r[0]
            for r in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        for table in tables:
            row = connection.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) "
                f'FROM "{table}" t'
            ).fetchone()
            state[table] = row
    return state


def _pg_other_app(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE notes (id SERIAL PRIMARY KEY, body TEXT)")
        connection.execute("INSERT INTO notes (body) VALUES ('mine')")


PG_CASES: dict[str, tuple[Callable[[str], object], int, list[str]]] = {
    "a database that does not exist": (
        lambda url: None,
        2,
        [NO_STORE, "the database does not exist; check the URL"],
    ),
    "an empty database": (lambda url: None, 2, [NO_STORE, NO_TABLES]),
    "another app's database": (_pg_other_app, 2, [NO_STORE, NO_TABLES]),
    "a store of schema 5": (downgraded, 2, [OLDER]),
    "a sound store": (filled, 0, []),
}


@pytest.mark.parametrize("case", list(PG_CASES))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_postgresql_reader_creates_and_changes_nothing(
    pg_url: str, command: str, case: str
) -> None:
    url = pg_url
    if case == "a database that does not exist":
        url = urlunsplit(urlsplit(pg_url)._replace(path="/statekit_typo"))
    make, code, says = PG_CASES[case]
    make(url)
    before = pg_state(url)
    done = statekit(*COMMANDS[command], "--db", url)
    assert done.returncode == code, done.stdout + done.stderr
    for words in says:
        assert words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert pg_state(url) == before


# ---- the Python entry point -------------------------------------------------------------


def test_open_read_only_store_refuses_a_write(store_url: str) -> None:
    filled(store_url)
    with open_read_only_store(store_url) as store:
        assert store.read_only and store.schema_version() == LATEST
        with pytest.raises(Exception, match=r"read-only|readonly"), store.write():
            store.register_chart("sha256:" + "0" * 64, "x", 1, None)


def test_an_in_memory_database_is_never_a_store_to_read() -> None:
    with pytest.raises(Exception, match="an in-memory database is always empty"):
        open_read_only_store("sqlite:///:memory:")


def test_a_store_opened_to_write_is_upgraded_and_then_reads(tmp_path: Path) -> None:
    # the way out of the refusal that the message names: a writer upgrades the schema
    url = f"sqlite:///{tmp_path / 'old.db'}"
    downgraded(url)
    assert statekit("verify", "--db", url).returncode == 2
    open_store(url).close()
    done = statekit("verify", "--db", url)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- migrate: a writer that never creates a store ----------------------------------------

MIGRATE = ["migrate", "--chart", PAYMENT]


@pytest.mark.parametrize("case", ["missing", "an empty file", "another app's database"])
def test_migrate_refuses_a_sqlite_store_that_is_not_there(tmp_path: Path, case: str) -> None:
    folder = tmp_path / "stores"
    folder.mkdir()
    path = folder / "typo.db"
    make, _, says = SQLITE_CASES[case]
    make(path)
    before = sqlite_state(folder)
    done = statekit(*MIGRATE, "--db", f"sqlite:///{path}")
    assert done.returncode == 2, done.stdout + done.stderr
    for words in says:
        assert words in done.stderr, done.stderr
    assert sqlite_state(folder) == before


@pytest.mark.parametrize(
    "case", ["a database that does not exist", "an empty database", "another app's database"]
)
def test_migrate_refuses_a_postgresql_store_that_is_not_there(pg_url: str, case: str) -> None:
    url = pg_url
    if case == "a database that does not exist":
        url = urlunsplit(urlsplit(pg_url)._replace(path="/statekit_typo"))
    make, _, says = PG_CASES[case]
    make(url)
    before = pg_state(url)
    done = statekit(*MIGRATE, "--db", url)
    assert done.returncode == 2, done.stdout + done.stderr
    for words in says:
        assert words in done.stderr, done.stderr
    assert pg_state(url) == before


def test_migrate_upgrades_an_older_store_and_moves_its_instances(store_url: str) -> None:
    downgraded(store_url)
    done = statekit(*MIGRATE, "--db", store_url)
    assert done.returncode == 0, done.stdout + done.stderr
    with open_read_only_store(store_url) as store:
        assert store.schema_version() == LATEST

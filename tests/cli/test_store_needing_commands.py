"""Every command that reads or relays an existing store (never one that creates it)
refuses a store that is not there, rather than making an empty one: a mistyped
SQLite path or PostgreSQL database name is exit 2, "no statekit store at …", and no
file or database is left behind. (`statekit run` and `statekit worker` create the
store they are given.)"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from cli_process import statekit
from runner_charts import MACHINES

PAYMENT = str(MACHINES / "payment.yaml")

COMMANDS: dict[str, list[str]] = {
    "verify": ["verify"],
    "timers": ["timers"],
    "outbox": ["outbox"],
    "migrate": ["migrate", "--chart", PAYMENT],
    "migrate --dry-run": ["migrate", "--chart", PAYMENT, "--dry-run"],
    "prune": ["prune", "--delivered-before", "1d"],
    "prune --dry-run": ["prune", "--delivered-before", "1d", "--dry-run"],
    # the store is opened before the broker is asked: no NATS server needed
    "relay": ["relay", "--to", "nats://127.0.0.1:1/shop", "--once"],
}

NO_STORE = "no statekit store at "


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_sqlite_store_is_refused_and_not_created(tmp_path: Path, command: str) -> None:
    path = tmp_path / "typo.db"
    done = statekit(*COMMANDS[command], "--db", f"sqlite:///{path}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert NO_STORE in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_postgresql_database_is_refused_and_not_created(
    pg_url: str, command: str
) -> None:
    url = urlunsplit(urlsplit(pg_url)._replace(path="/statekit_typo"))
    done = statekit(*COMMANDS[command], "--db", url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "statekit_typo" in done.stderr and "Traceback" not in done.stderr, done.stderr
    with psycopg.connect(pg_url, autocommit=True) as admin:
        names = {r[0] for r in admin.execute("SELECT datname FROM pg_database")}
    assert "statekit_typo" not in names


def test_an_empty_postgresql_database_gets_no_statekit_tables_from_a_relay(pg_url: str) -> None:
    done = statekit(*COMMANDS["relay"], "--db", pg_url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert NO_STORE in done.stderr, done.stderr
    with psycopg.connect(pg_url, autocommit=True) as conn:
        tables = conn.execute("SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'")
        assert tables.fetchone() == (0,)

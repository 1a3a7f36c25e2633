"""open_store URLs and the versioned schema (upgraded in place, never downgraded)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_charts import COUNTER, MACHINES, chart_from

import statekit
from statekit.runner.errors import SchemaVersionError, StoreURLError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.migrations import LATEST, MIGRATIONS, Migration


def test_a_new_store_is_at_the_latest_schema(store_url: str) -> None:
    store = open_store(store_url)
    assert store.schema_version() == LATEST
    assert open_store(store_url).schema_version() == LATEST  # reopening changes nothing
    rows = store.execute("SELECT version FROM statekit_schema_migrations").fetchall()
    assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]


def test_a_later_migration_upgrades_an_existing_database_in_place(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    runner.create("c")
    runner.apply("c", "e1", "Incr", {"by": 2})
    runner.store.close()
    step = Migration(
        LATEST + 1,
        "an index on events by type",
        ("CREATE INDEX statekit_events_type ON statekit_events (type)",),
        ("CREATE INDEX statekit_events_type ON statekit_events (type)",),
    )
    upgraded = open_store(store_url)
    assert upgraded.migrate((*MIGRATIONS, step)) == LATEST + 1
    assert upgraded.schema_version() == LATEST + 1
    assert upgraded.migrate((*MIGRATIONS, step)) == LATEST + 1  # applied once
    again = Runner(chart_from(COUNTER), upgraded)
    assert again.load("c").state.context["total"] == 2
    assert again.apply("c", "e2", "Incr", {"by": 1}).version == 2


def test_a_newer_schema_is_refused(store_url: str) -> None:
    store = open_store(store_url)
    with store.write():
        store.execute(
            "INSERT INTO statekit_schema_migrations (version, description, applied_at) "
            "VALUES (?, ?, ?)",
            (LATEST + 5, "from the future", time.time()),
        )
    store.close()
    with pytest.raises(SchemaVersionError, match=f"version {LATEST + 5}, newer than"):
        open_store(store_url)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://x/y", "unknown store"),
        ("sqlite://host/x.db", "no host"),
        ("sqlite://", "no database file"),
        ("sqlite:///x.db?synchronous=SOMETIMES", "synchronous must be"),
        ("sqlite:///x.db?colour=blue", "unknown SQLite options"),
        ("postgresql://nobody@127.0.0.1:1/none", "cannot connect"),
    ],
)
def test_bad_urls_are_clear_errors(url: str, message: str) -> None:
    with pytest.raises(StoreURLError, match=message):
        open_store(url, **({"connect_timeout": 2} if url.startswith("postgresql") else {}))


def test_a_file_that_is_not_a_sqlite_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("not a database\n" * 100)
    with pytest.raises(StoreURLError, match="cannot open the database: file is not a database"):
        open_store(f"sqlite:///{tmp_path / 'notes.db'}")


def test_sqlite_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    open_store("sqlite:///relative.db").close()
    assert (tmp_path / "relative.db").exists()
    open_store(f"sqlite:///{tmp_path / 'absolute.db'}").close()
    assert (tmp_path / "absolute.db").exists()
    memory = open_store("sqlite:///:memory:")
    runner = Runner(chart_from(COUNTER), memory)
    runner.create("c")
    assert runner.apply("c", "e", "Incr", {"by": 1}).applied
    mode = open_store("sqlite:///relative.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_sqlite_users_do_not_import_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys, statekit; s = statekit.open_store('sqlite:///x.db'); "
        "statekit.Runner, statekit.Dispatcher; print('psycopg' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def test_the_chart_source_is_kept_for_replay(store_url: str) -> None:
    store = open_store(store_url)
    Runner(statekit.load(MACHINES / "payment.yaml"), store)  # no source given: none kept
    [row] = store.charts()
    assert (row.name, row.source) == ("payment", None)
    Runner.from_file(MACHINES / "payment.yaml", store)  # the text it compiled is kept
    [row] = store.charts()
    assert row.source == (MACHINES / "payment.yaml").read_text(encoding="utf-8")
    Runner(statekit.load(MACHINES / "payment.yaml"), store, source="ignored: one is kept")
    assert store.charts() == [row]


def test_a_chart_file_with_errors_is_a_compile_error(store_url: str, tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("statechart: [unclosed\n", encoding="utf-8")
    with pytest.raises(statekit.CompileError):
        Runner.from_file(tmp_path / "broken.yaml", open_store(store_url))

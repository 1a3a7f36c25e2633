"""`open_store`: the URLs it takes, the clear errors for those it cannot use."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from runner_charts import COUNTER, chart_from

from statekit.runner.errors import StoreURLError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"
EXTRAS = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://x/y", "unknown store"),
        ("sqlite://host/x.db", "no host"),
        ("sqlite://", "no database file"),
        ("sqlite:///x.db?synchronous=SOMETIMES", "synchronous must be"),
        ("sqlite:///x.db?colour=blue", "unknown SQLite options"),
        ("postgresql://nobody@127.0.0.1:1/none?retry_for=x", "retry_for='x'"),
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


def test_without_psycopg_the_error_names_what_to_install() -> None:
    """statekit is on no package index: the message names the extra's own requirement."""
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from statekit.runner.store import open_store\n"
        "from statekit.runner.errors import StoreURLError\n"
        "try:\n"
        "    open_store('postgresql://nobody@127.0.0.1:1/none')\n"
        "except StoreURLError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == (
        "'postgresql://nobody@127.0.0.1:1/none': PostgreSQL needs psycopg 3 (statekit's "
        "`postgres` extra): pip install 'psycopg[binary]>=3.1,<3.4'\n"
    )
    assert "psycopg[binary]>=3.1,<3.4" in EXTRAS["postgres"]

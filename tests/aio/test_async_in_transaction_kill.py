"""A process killed anywhere in its async in-transaction write leaves both the
application's row and statekit's event, or neither: at every point of the family
(`in_transaction_child.POINTS`), on SQLite and PostgreSQL."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from in_transaction_child import POINTS
from runner_charts import COUNTER, chart_from
from test_async_in_transaction import app_rows

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

CHILD = Path(__file__).with_name("in_transaction_child.py")
TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_each_point_leaves_both_or_neither(store_url: str, point: str) -> None:
    with open_store(store_url) as store:
        with store.write():
            store.execute("CREATE TABLE app_rows (id INTEGER PRIMARY KEY, note TEXT)")
        Runner(chart_from(COUNTER), store).create("a")
    done = subprocess.run(
        [sys.executable, str(CHILD), store_url, point],
        env={"PYTHONPATH": str(TESTS), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    with open_store(store_url) as store:
        events = [e.event_id for e in Runner(chart_from(COUNTER), store).history("a")]
    rows = app_rows(store_url)
    committed = point == "after-commit"
    assert (events, rows) == ((["e1"], [(1, "with e1")]) if committed else ([], []))

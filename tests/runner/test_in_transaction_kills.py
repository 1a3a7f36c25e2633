"""A process writing the application's row and a statekit event in one transaction
(`Runner.in_transaction`) is SIGKILLed at every point of that transaction, for every kind
of connection on each store: the parent then finds both or neither, and exactly neither
before the application's commit returned and both after.

The child (`in_transaction_process.py`) stops at each point and waits for a line on its
standard input, so the kill lands exactly there: no sleep decides where.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from app_connections import App, orders
from in_transaction_process import POINTS
from runner_charts import COUNTER, chart_from, write_chart

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

CHILD = Path(__file__).resolve().parent / "in_transaction_process.py"
COMBINATIONS = [
    ("sqlite3", "sqlite"),
    ("core", "sqlite"),
    ("orm", "sqlite"),
    ("psycopg", "postgresql"),
    ("core", "postgresql"),
    ("orm", "postgresql"),
]


def _killed_at(point: str, kind: str, url: str, chart: Path, name: str) -> None:
    """Run the child until it reaches `point`, then SIGKILL it there."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHILD.parent), str(CHILD.parents[1])])}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), kind, url, str(chart), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    try:
        for line in child.stdout:
            if line.strip() == point:
                child.send_signal(signal.SIGKILL)
                break
            child.stdin.write("go\n")
            child.stdin.flush()
        else:
            raise AssertionError(f"the child ended before {point}: {child.stderr.read()}")
    finally:
        child.wait(timeout=60)
        child.stdin.close()
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL


@pytest.mark.parametrize("kind,store", COMBINATIONS, ids=[f"{k}-{s}" for k, s in COMBINATIONS])
def test_a_kill_at_any_point_leaves_both_or_neither(
    kind: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'app.db'}"
        if store == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    runner = Runner(chart_from(COUNTER), open_store(url))
    App(kind, url).close()  # the application's table
    chart = write_chart(COUNTER, tmp_path, "counter")
    for point in POINTS:
        runner.create(point)
        _killed_at(point, kind, url, chart, point)
        committed = point == "committed"
        has_order = point in orders(url)
        events = [e.event_id for e in runner.history(point)]
        outbox = runner.store.execute(
            "SELECT COUNT(*) FROM statekit_outbox WHERE instance_id = ?", (point,)
        ).fetchone()[0]
        found = (has_order, events, outbox, runner.load(point).version)
        assert found == ((True, [point], 1, 1) if committed else (False, [], 0, 0)), point
        assert runner.verify(point).ok, point
    # the store goes on: a later transaction on an instance killed mid-write applies
    assert runner.apply("statekit-release", "after", "Incr", {"by": 1}).version == 1

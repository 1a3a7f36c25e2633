"""What writing in the application's transaction (`Runner.in_transaction`) costs, as ratios
measured in one run.

Run: `python -m bench.in_transaction [EVENTS] [--sqlite-only]` from the repository root
(PostgreSQL must be installed unless `--sqlite-only`: a throwaway server is started on
loopback). Each event is a request that writes one application row (`orders`) and
applies one counter event (`bench._runner_loops.COUNTER`) to one of 20 instances:

- "two transactions": the application's INSERT committed, then `Runner.apply` in the
  runner's own transaction (what an application does without `in_transaction`: a crash
  between the two commits leaves them disagreeing);
- "one transaction": `BEGIN IMMEDIATE` (SQLite) / psycopg's implicit transaction, the
  INSERT, `runner.in_transaction(conn)` and `apply`, the application's COMMIT;
- "apply alone": `Runner.apply` with no application row (the floor).

Each figure is the median of RUNS (5) runs with its range, the three ways interleaved
run by run, each run on fresh instances. The machine is shared: compare the ratios.
"""

from __future__ import annotations

import itertools
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from bench._runner_loops import COUNTER
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 5
INSTANCES = 20
_runs = itertools.count(1)


class _App:
    """The application's connection and its SQL dialect."""

    def __init__(self, url: str) -> None:
        self.sqlite = url.startswith("sqlite")
        self.conn: Any = (
            sqlite3.connect(url[len("sqlite:///") :], isolation_level=None, timeout=30)
            if self.sqlite
            else psycopg.connect(url)
        )
        mark = "?" if self.sqlite else "%s"
        self.insert = f"INSERT INTO orders (id, total) VALUES ({mark}, {mark})"
        self.conn.execute("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, total INTEGER)")
        self.commit()

    def begin(self) -> None:
        if self.sqlite:
            self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        if self.sqlite:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")
        else:
            self.conn.commit()


def _way(name: str, runner: Runner, app: _App, events: int, run: int) -> float:
    """Seconds per event of one way (see the module docstring)."""
    ids = [f"r{run}-{name}-{i}" for i in range(INSTANCES)]
    for instance in ids:
        runner.create(instance)
    start = time.perf_counter()
    for n in range(events):
        instance, key = ids[n % INSTANCES], f"r{run}-{name}-{n}"
        if name == "apply alone":
            runner.apply(instance, key, "Incr", {"by": 1})
        elif name == "two transactions":
            app.begin()
            app.conn.execute(app.insert, (key, n))
            app.commit()
            runner.apply(instance, key, "Incr", {"by": 1})
        else:
            app.begin()
            app.conn.execute(app.insert, (key, n))
            with runner.in_transaction(app.conn) as tx:
                tx.apply(instance, key, "Incr", {"by": 1})
            app.commit()
    return (time.perf_counter() - start) / events


WAYS = ("apply alone", "two transactions", "one transaction")


def measure(label: str, url: str, events: int) -> None:
    """Print the three ways' medians on the store at `url`."""
    result = compile_source(COUNTER, "<bench>")
    assert result.chart is not None
    runner = Runner(Chart(result.chart), open_store(url))
    app = _App(url)
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(RUNS):
        run = next(_runs)
        for way in WAYS:
            times[way].append(_way(way, runner, app, events, run))
    floor = statistics.median(times["apply alone"])
    print(f"{label}:")
    for way in WAYS:
        values = times[way]
        median = statistics.median(values)
        print(
            f"  {way:<18} {median * 1e6:8.0f} µs/event ({min(values) * 1e6:.0f}-"
            f"{max(values) * 1e6:.0f})  {median / floor:5.2f}x apply alone"
        )
    app.conn.close()
    runner.store.close()


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    events = int(args[0]) if args else 400
    folder = Path(tempfile.mkdtemp(prefix="statekit-in-transaction-bench-"))
    stores: list[tuple[str, Callable[[], str]]] = [
        ("SQLite (synchronous=FULL)", lambda: f"sqlite:///{folder / 'shop.db'}")
    ]
    server = None
    if "--sqlite-only" not in sys.argv:
        server = ThrowawayPostgres().start()
        started = server
        stores.append(("PostgreSQL (loopback)", lambda: started.create_database("shop")))
    print(f"{events} events of {INSTANCES} instances, medians of {RUNS} runs (range)\n")
    try:
        for label, make in stores:
            measure(label, make(), events)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()

"""`statekit worker` start-up against the number of armed timers, and its idle CPU when
the only due timer's instance is locked by another transaction.

Run: `python -m bench.worker_startup [SIZES] [--sqlite-only | --postgres-only]` from the
repository root (SIZES: comma-separated numbers of armed timers, default 1000,100000,1000000;
PostgreSQL must be installed: a throwaway server is started on loopback).

Start-up: a store holding SIZES instances of the lease chart (`tests/runner_charts.py`'s
LEASE), each with one timer armed a day ahead (rows copied from one real instance by
SQL, so the store holds valid instances), then `statekit worker --once` with nothing
due, timed as a process (what an operator waits for, Python's start-up included) and
in-process (`Worker.run(once=True)` on an open store: the part that could grow with
the timers). Median of 5 each, with its range; each process run is interleaved with
one run of each floor, measured in the same rounds: `python -c pass` (the
interpreter's start-up) and `python -m statekit --help` (statekit's command line
loaded), so that the ratios hold on a loaded machine.

Idle CPU (PostgreSQL, whose claim skips locked instances; SQLite's claim waits on the
write lock instead): one instance with a due timer, its row held `FOR UPDATE` by
another connection, and `statekit worker` running for 5 s: its user + system CPU
time over those 5 s.
"""

from __future__ import annotations

import io
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from statekit.cli.timer_commands import Worker
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.testing.postgres_server import ThrowawayPostgres

ROOT = Path(__file__).resolve().parents[1]
DAY_MS = 86_400_000
IDLE_SECONDS = 5.0


def _lease() -> tuple[Chart, str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from runner_charts import LEASE, chart_from  # the tests' chart, one definition

    return chart_from(LEASE, "lease.yaml"), LEASE


def _fill(store: Store, runner: Runner, count: int) -> None:
    """`count` instances copied from `runner`'s instance 'seed', each with its timer."""
    runner.create("seed")
    columns = (
        "chart_name, chart_version, chart_digest, version, configuration, context, history, "
        "timers, initial_context, created_at, updated_at, start_clock_ms"
    )
    timer_columns = "timer_id, generation, event, payload, due_ms, sequence"
    if store.dialect == "postgresql":
        numbers = "SELECT g AS n FROM generate_series(1, ?) g"
    else:
        numbers = (
            "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?) "
            "SELECT n FROM g"
        )
    with store.write():
        store.execute(
            f"INSERT INTO statekit_instances (instance_id, {columns}) SELECT 'i' || n, "
            f"{columns} FROM ({numbers}) g, statekit_instances s WHERE s.instance_id = 'seed'",
            (count - 1,),
        )
        store.execute(
            f"INSERT INTO statekit_timers (instance_id, {timer_columns}) SELECT 'i' || n, "
            f"{timer_columns} FROM ({numbers}) g, statekit_timers s "
            "WHERE s.instance_id = 'seed'",
            (count - 1,),
        )
    if store.dialect == "postgresql":
        store.execute("ANALYZE")


ROUNDS = 5
FLOORS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "statekit --help": [sys.executable, "-m", "statekit", "--help"],
}
"""The processes each `worker --once` run is compared with, run in the same rounds."""


def _timed(command: list[str]) -> float:
    """Wall seconds of one run of `command` (which must succeed)."""
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    took = time.perf_counter() - began
    assert done.returncode == 0, done.stderr
    return took


def _spread(values: list[float], scale: float = 1.0, unit: str = "s") -> str:
    """A median with its range."""
    low, mid, high = min(values) * scale, statistics.median(values) * scale, max(values) * scale
    return f"{mid:.2f} {unit} ({low:.2f}-{high:.2f})"


def _startup(
    url: str, chart_file: Path, lease: Chart
) -> tuple[list[float], list[float], dict[str, list[float]]]:
    """The seconds of `worker --once` with nothing due as a process and in-process, and
    of each of `FLOORS` in the same rounds."""
    process: list[float] = []
    inside: list[float] = []
    floors: dict[str, list[float]] = {name: [] for name in FLOORS}
    once = [sys.executable, "-m", "statekit", "worker", "--db", url, "--chart",
              str(chart_file), "--once"]  # fmt: skip
    for _ in range(ROUNDS):
        for name, command in FLOORS.items():
            floors[name].append(_timed(command))
        process.append(_timed(once))
        store = open_store(url)
        began = time.perf_counter()
        worker = Worker(store, [Runner(lease, store)], io.StringIO(), io.StringIO())
        worker.run(once=True, max_sleep=1.0)
        inside.append(time.perf_counter() - began)
        store.close()
    return process, inside, floors


def _idle_cpu(url: str, chart_file: Path, lease: Chart) -> float:
    """CPU seconds per second of a worker whose only due timer's instance is locked."""
    setup = Runner(lease, open_store(url), clock=lambda: 1_000_000)
    setup.create("locked")
    setup.apply("locked", "s", "Start")  # its timers are long due
    holder = psycopg.connect(url)
    holder.execute("SELECT 1 FROM statekit_instances WHERE instance_id = 'locked' FOR UPDATE")
    child = subprocess.Popen(
        [sys.executable, "-m", "statekit.cli", "worker", "--db", url, "--chart", str(chart_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    child.stderr.readline()  # "delivering the timers of …": start-up is over
    before = _cpu(child.pid)
    time.sleep(IDLE_SECONDS)  # the period measured
    used = _cpu(child.pid) - before
    child.send_signal(signal.SIGTERM)
    child.wait(60)
    holder.rollback()
    holder.close()
    setup.store.close()
    return used / IDLE_SECONDS


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sizes = [int(s) for s in (args[0] if args else "1000,100000,1000000").split(",")]
    lease, text = _lease()
    with tempfile.TemporaryDirectory() as folder:
        chart_file = Path(folder) / "lease.yaml"
        chart_file.write_text(text)
        stores: list[tuple[str, object]] = []
        if "--postgres-only" not in sys.argv:
            stores.append(("SQLite", None))
        if "--sqlite-only" not in sys.argv:
            stores.append(("PostgreSQL", ThrowawayPostgres().start()))
        print(
            "| store | armed timers | `worker --once`, process | `python -c pass` | "
            "`statekit --help` | worker - python | worker / `--help` | start-up in process |"
        )
        print("|---|---|---|---|---|---|---|---|")
        idle: list[str] = []
        try:
            for name, server in stores:
                for size in sizes:
                    if server is None:
                        url = f"sqlite:///{Path(folder) / f'w{size}.db'}?synchronous=OFF"
                    else:
                        url = server.create_database(f"worker_{size}")  # type: ignore[attr-defined]
                    runner = Runner(lease, open_store(url))
                    _fill(runner.store, runner, size)
                    runner.store.close()
                    process, inside, floors = _startup(url, chart_file, lease)
                    python, helped = floors["python -c pass"], floors["statekit --help"]
                    over = [w - p for w, p in zip(process, python, strict=True)]
                    ratio = [w / h for w, h in zip(process, helped, strict=True)]
                    print(
                        f"| {name} | {size:,} | {_spread(process)} | {_spread(python)} | "
                        f"{_spread(helped)} | {_spread(over)} | {_spread(ratio, unit='x')} | "
                        f"{_spread(inside, 1000, 'ms')} |"
                    )
                if server is not None:
                    url = server.create_database("worker_idle")  # type: ignore[attr-defined]
                    idle.append(f"{name}: {_idle_cpu(url, chart_file, lease):.1%}")
        finally:
            for _, server in stores:
                if server is not None:
                    server.stop()  # type: ignore[attr-defined]
        print(f"idle CPU of a worker facing a locked due timer, {IDLE_SECONDS:g} s: "
              + ", ".join(idle))  # fmt: skip


if __name__ == "__main__":
    main()

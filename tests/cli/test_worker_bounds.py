"""`statekit worker` in bounded time: start-up costs the same whatever the number of armed
timers, a due timer whose instance is locked is not polled in a loop, and a SIGTERM during
start-up ends in a clean 0 (each forced, never hoped for)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from runner_charts import LEASE, chart_from, write_chart

from statekit.cli.timer_commands import BACKOFF_FIRST, Worker
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.hold_points import BEGIN, LOCKED
from statekit.runner.store.postgres import SCHEMA_LOCK

PAST = 1_000_000  # epoch ms: a timer armed then is long due
WAIT = 30.0


def _counted(store: Store) -> list[str]:
    """Every statement `store` runs from now on, in order."""
    seen: list[str] = []
    execute, executemany = store.execute, store.executemany

    def counting(sql: str, params: Any = ()) -> Any:
        seen.append(sql)
        return execute(sql, params)

    def counting_many(sql: str, rows: Any) -> None:
        seen.append(sql)
        executemany(sql, rows)

    store.execute = counting  # type: ignore[method-assign]
    store.executemany = counting_many  # type: ignore[method-assign]
    return seen


def _startup_statements(url: str, instances: int) -> list[str]:
    """The statements a worker's start-up and first idle look run, `instances` instances
    each with a timer armed a day ahead (none due)."""
    setup = Runner(chart_from(LEASE), open_store(url))
    for n in range(instances):
        setup.create(f"i{n}")  # `idle` arms its 1d timer
    setup.store.close()
    store = open_store(url)
    seen = _counted(store)
    worker = Worker(store, [Runner(chart_from(LEASE), store)], io.StringIO(), io.StringIO())
    worker.run(once=True, max_sleep=1.0)
    store.close()
    return seen


def test_worker_start_up_runs_the_same_statements_whatever_the_armed_timers(
    store_url: str, tmp_path: Path
) -> None:
    few = _startup_statements(store_url, 3)
    if store_url.startswith("sqlite"):
        many_url = f"sqlite:///{tmp_path / 'many.db'}"
    else:
        many_url = store_url.rsplit("/", 1)[0] + "/" + _fresh_database(store_url)
    many = _startup_statements(many_url, 150)
    assert len(few) == len(many), (few, many)
    assert len(many) <= 10, many


def _fresh_database(url: str) -> str:
    name = f"startup_many_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


class _HoldLocked:
    """Holds its transaction at LOCKED until `release` is set."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, point: str) -> None:
        if point == LOCKED and not self.reached.is_set():
            self.reached.set()
            assert self.release.wait(WAIT)


def test_a_worker_facing_a_locked_due_timer_backs_off(pg_url: str) -> None:
    """PostgreSQL's claim skips an instance another transaction holds; the worker then
    looks again after a backoff, not in a loop (SQLite's claim waits for the write lock
    instead, and never spins)."""
    setup = Runner(chart_from(LEASE), open_store(pg_url), clock=lambda: PAST)
    setup.create("a")
    setup.apply("a", "a-start", "Start")  # its reminder and expiry are long due
    setup.store.close()
    setup = Runner(chart_from(LEASE), open_store(pg_url), clock=lambda: PAST)  # reads first
    holder = _HoldLocked()
    setup.store.hold = holder
    held = threading.Thread(target=setup.apply, args=("a", "a-beat", "Beat"))
    held.start()
    assert holder.reached.wait(WAIT)
    store = open_store(pg_url)
    worker = Worker(store, [Runner(chart_from(LEASE), store)], io.StringIO(), io.StringIO())
    began: list[float] = []
    store.hold = lambda point: began.append(time.monotonic()) if point == BEGIN else None
    period = 1.0
    stopper = threading.Timer(period, worker.stop.set)  # the period measured, not a race
    stopper.start()
    cpu = time.thread_time()
    worker.run(once=False, max_sleep=1.0)
    cpu = time.thread_time() - cpu
    holder.release.set()
    held.join(WAIT)
    # backoff 0.05, 0.1, 0.2, 0.4 (then 0.8) s: a handful of transactions, not thousands
    assert 1 <= len(began) <= 2 + int(period / BACKOFF_FIRST).bit_length(), began
    assert cpu < 0.5, cpu
    assert worker.out.getvalue() == ""  # type: ignore[attr-defined]
    store.close()
    setup.store.close()


def _waiting_on_advisory(url: str) -> Callable[[], bool]:
    monitor = psycopg.connect(url, autocommit=True)

    def waiting() -> bool:
        row = monitor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
        ).fetchone()
        return bool(row and row[0])

    return waiting


def test_sigterm_during_start_up_exits_cleanly(pg_url: str, tmp_path: Path) -> None:
    """The worker's start-up is held on the schema lock its store takes on opening (held
    here in a transaction), the SIGTERM sent while it waits, then the lock released."""
    Runner(chart_from(LEASE), open_store(pg_url)).store.close()  # the schema exists
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    blocker = psycopg.connect(pg_url)  # not autocommit: the lock lasts until rollback
    blocker.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
    child = subprocess.Popen(
        [sys.executable, "-m", "statekit.cli", "worker", "--db", pg_url, "--chart", chart],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    waiting = _waiting_on_advisory(pg_url)
    deadline = time.monotonic() + WAIT
    while not waiting():  # an observable state: its backend waits on the schema lock
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the worker never reached its store's opening"
        time.sleep(0.01)
    child.send_signal(signal.SIGTERM)
    blocker.rollback()
    out, err = child.communicate(timeout=WAIT)
    blocker.close()
    assert child.returncode == 0, (child.returncode, err)
    assert out == "" and "Traceback" not in err


@pytest.fixture(autouse=True)
def _no_leftover_threads() -> Any:
    yield
    assert threading.active_count() < 10

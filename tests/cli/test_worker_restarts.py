"""`statekit worker` across a PostgreSQL server that is down, starting or restarted.

- a worker started while the server is down says so, waits, and fires once it is up;
- a SIGTERM while the worker waits for the server (at start-up, or after losing its
  connection) ends it with 0 at once; `?retry_for=` on the URL bounds the wait (exit 2,
  a message saying what to do);
- the server restarted (fast and immediate) while a worker's delivery transaction is
  held at each of its points (`hold_points`): the transaction is done again (by the
  runner, or by the worker once reconnected) and every timer is delivered exactly
  once, `verify` clean.
"""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO

import pytest
from cli_process import statekit
from runner_charts import TICKER, chart_from, write_chart
from store_fixtures import DURABLE_SETTINGS

from statekit.cli.store_link import StoreLink
from statekit.cli.timer_commands import Worker
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.hold_points import POINTS
from statekit.testing.postgres_server import ThrowawayPostgres

WAIT = 60.0
PAST = 1_000_000  # epoch ms: timers armed then are long due
TICKERS = 20  # ten timers each


@pytest.fixture
def server() -> object:
    """A server of this test's own: it is stopped and restarted."""
    with ThrowawayPostgres(DURABLE_SETTINGS) as own:
        yield own


def _worker(url: str, chart: Path, out: IO[bytes]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "statekit", "worker", "--db", url, "--chart", str(chart),
         "--max-sleep", "0.05"],
        stdout=out, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _read_until(child: subprocess.Popen[str], words: str) -> list[str]:
    """The worker's standard error up to the first line holding `words` (a state it
    reports, not a time hoped for)."""
    assert child.stderr is not None
    seen: list[str] = []
    while True:
        line = child.stderr.readline()
        assert line, ("the worker ended before saying", words, seen, child.wait())
        seen.append(line)
        if words in line:
            return seen


def _timer_events(store: Store) -> Counter[tuple[str, str]]:
    rows = store.execute(
        "SELECT instance_id, event_id FROM statekit_events WHERE event_id LIKE ?",
        ("statekit.timer/%",),
    ).fetchall()
    return Counter((r[0], r[1]) for r in rows)


def test_a_worker_started_before_the_server_waits_then_fires(
    server: ThrowawayPostgres, tmp_path: Path
) -> None:
    url = server.create_database("early")
    chart = write_chart(TICKER, tmp_path, "ticker")
    open_store(url).close()
    server.halt()
    with (tmp_path / "out").open("wb") as out:
        child = _worker(url, chart, out)
        said = _read_until(child, "waiting for the server")
        server.resume()
        _read_until(child, "delivering the timers of ticker v1")
        runner = Runner(chart_from(TICKER), open_store(url))
        for n in range(5):
            runner.create(f"i{n}")  # ten timers each, due within a second
        deadline = time.monotonic() + WAIT
        while runner.store.timers():
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=WAIT)
    assert child.returncode == 0, err
    assert len(said) == 1 and "Traceback" not in err
    events = _timer_events(runner.store)
    assert len(events) == 50 and set(events.values()) == {1}
    runner.store.close()


@pytest.mark.parametrize("when", ["at start-up", "after losing its connection"])
def test_sigterm_while_waiting_for_the_server_exits_0(
    server: ThrowawayPostgres, tmp_path: Path, when: str
) -> None:
    url = server.create_database("sigterm")
    chart = write_chart(TICKER, tmp_path, "ticker")
    open_store(url).close()
    if when == "at start-up":
        server.halt()
    with (tmp_path / "out").open("wb") as out:
        child = _worker(url, chart, out)
        if when != "at start-up":
            _read_until(child, "delivering the timers")
            server.halt()
        _read_until(child, "waiting for the server")
        began = time.monotonic()
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=WAIT)
    assert child.returncode == 0, err
    assert time.monotonic() - began < 5.0  # no wait for the server to come back first
    assert "Traceback" not in err and "internal error" not in err
    server.resume()  # for the fixture's stop


def test_retry_for_on_the_url_bounds_the_wait(server: ThrowawayPostgres, tmp_path: Path) -> None:
    url = server.create_database("bounded")
    chart = write_chart(TICKER, tmp_path, "ticker")
    open_store(url).close()
    server.halt()
    done = statekit("worker", "--db", f"{url}?retry_for=0.5", "--chart", str(chart))
    server.resume()
    assert done.returncode == 2, done.stderr
    assert "the store could not be reached for 0.5 s" in done.stderr
    assert "?retry_for=SECONDS" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("mode", ["fast", "immediate"])
@pytest.mark.parametrize("point", POINTS)
def test_a_restart_in_a_delivery_transaction_loses_and_doubles_nothing(
    server: ThrowawayPostgres, point: str, mode: str
) -> None:
    url = server.create_database("held")
    setup = Runner(chart_from(TICKER), open_store(url), clock=lambda: PAST)
    for n in range(TICKERS):
        setup.create(f"i{n}")  # 200 timers, all long due
    setup.store.close()
    restarted: list[str] = []

    def hold(reached: str) -> None:
        if reached == point and not restarted:
            restarted.append(reached)
            server.restart(mode)  # the worker's connection goes while it is held here

    def ready(store: Store) -> list[Runner]:
        if not restarted:
            store.hold = hold
        return [Runner(chart_from(TICKER), store)]

    err = io.StringIO()
    link = StoreLink(url, "worker", threading.Event(), err)
    opened = link.open(ready)
    assert opened is not None
    worker = Worker(opened[0], opened[1], io.StringIO(), err)
    worker.reopen = lambda broken, exc: link.reopen(broken, exc, ready)
    worker.run(once=True, max_sleep=0.05)
    worker.store.close()
    assert restarted == [point]
    # healed by the runner's retry (`runner.retrying`) or by the worker's reconnecting
    assert all(line.startswith("statekit worker: ") for line in err.getvalue().splitlines())
    check = Runner(chart_from(TICKER), open_store(url))
    events = _timer_events(check.store)
    assert len(events) == 10 * TICKERS and set(events.values()) == {1}
    assert check.store.timers() == []
    for n in range(TICKERS):
        assert check.verify(f"i{n}").ok
    check.store.close()

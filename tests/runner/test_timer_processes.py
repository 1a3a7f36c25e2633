"""Timer workers as real processes against one store (SQLite and PostgreSQL).

- a worker (a forked process with its own connection) is killed with SIGKILL 100
  times (after a random count of acknowledged deliveries, then a random short
  pause: often inside a transaction) while timers come due on an injected clock (1,000
  of them, and 1,000 more in each new wave while fewer than 100 kills have landed, for
  a worker may finish what is due before its kill): every timer takes effect once (one
  history event per armed timer), none before its due time (the event row records
  the clock reading), none is lost, and every instance equals its replay;
- several workers at once (8 on PostgreSQL, 4 on SQLite) over 10,000 due timers:
  each is delivered once, with contiguous versions.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import timer_workers
from runner_charts import TICKER, chart_from, write_chart

from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.timers import parse_timer_event_id

WORKER = Path(__file__).resolve().parent / "timer_workers.py"
T0 = 1_700_000_000_000
KILLS = 100
TIMERS = 10  # per ticker instance: t1..t10, due 100 ms .. 1 s after its creation


def _fast(url: str) -> str:
    """The store URL, with SQLite's WAL syncing at checkpoints (still safe against a
    killed process, which is what these tests do)."""
    return f"{url}?synchronous=NORMAL" if url.startswith("sqlite") else url


class _Tickers:
    """A runner on an injected clock that creates ticker instances `i0`, `i1`, … in
    waves; each creation arms the instance's ten timers at the clock's reading."""

    def __init__(self, url: str) -> None:
        self.clock = T0
        self.runner = Runner(chart_from(TICKER), open_store(url), clock=lambda: self.clock)
        self.count = 0

    def create(self, instances: int, start: int, stagger: int) -> int:
        """`instances` more tickers, the k-th of them created at `start + stagger*k`;
        returns when the last of their timers is due."""
        for k in range(instances):
            self.clock = start + stagger * k
            self.runner.create(f"i{self.count}")
            self.count += 1
        return self.clock + 100 * TIMERS


def _created(url: str, instances: int, stagger: int) -> Runner:
    """`instances` tickers, instance i created (and its timers armed) at T0 + stagger*i."""
    tickers = _Tickers(url)
    tickers.create(instances, T0, stagger)
    return tickers.runner


def _worker(url: str, chart: Path, clock_file: Path, batch: int) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, str(WORKER), url, str(chart), str(clock_file), str(batch)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    ready = child.stdout.readline()
    assert ready == "ready\n", child.stderr.read() if child.stderr else ready
    return child


def _go(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.write("go\n")
    child.stdin.flush()


def _each_timer_took_effect_once(runner: Runner, instances: int) -> None:
    """Every instance's history holds each of its ten timers once, contiguous, none
    delivered before its due time; its state counted each once; no row is left."""
    store = runner.store
    with store.read():
        started = dict(store.execute("SELECT instance_id, start_clock_ms FROM statekit_instances"))
        contexts = dict(store.execute("SELECT instance_id, context FROM statekit_instances"))
        events = store.execute(
            # a history entry's status APPLIED is stored as NULL (schema 6)
            "SELECT instance_id, sequence, event_id, COALESCE(status, 'APPLIED'), type, payload, "
            "clock_ms FROM statekit_events ORDER BY instance_id, sequence"
        ).fetchall()
        left = store.timers()
    assert len(started) == instances and left == []
    by_instance: dict[str, list[Any]] = {}
    for event in events:
        by_instance.setdefault(event[0], []).append(event)
    assert len(by_instance) == instances
    for instance, history in by_instance.items():
        assert [e[1] for e in history] == list(range(1, TIMERS + 1))  # contiguous
        delivered: Counter[str] = Counter()
        for _, _, event_id, status, kind, payload, clock_ms in history:
            timer = parse_timer_event_id(event_id)
            assert timer is not None and (status, kind) == ("APPLIED", "Tick"), event_id
            delivered[timer[0]] += 1
            n = int(timer[0][1:])
            assert json.loads(payload) == {"n": n}
            assert clock_ms >= started[instance] + 100 * n  # never before it was due
        assert delivered == {f"t{n}": 1 for n in range(1, TIMERS + 1)}, instance
        assert json.loads(contexts[instance]) == {"ticks": 10, "seen": 55}


def test_sigkill_while_timers_come_due_loses_none_and_doubles_none(
    store_url: str, tmp_path: Path
) -> None:
    url = _fast(store_url)
    tickers = _Tickers(url)
    # 100 x 10 timers: 1,000, due from T0 + 100 ms to T0 + 1,297 ms; a worker may finish
    # what is due before its kill lands, so a new wave of tickers comes due whenever the
    # clock passes the last one's timers and fewer than KILLS kills have landed
    last_due = tickers.create(100, T0, 3)
    runner = tickers.runner
    chart = write_chart(TICKER, tmp_path, "ticker")
    clock_file = tmp_path / "clock"
    rng = random.Random(10)
    now, kills = T0 + 100, 0
    acknowledged: list[list[Any]] = []
    fork = multiprocessing.get_context("fork")
    while True:
        clock_file.write_text(str(now))
        read, write = os.pipe()
        child = fork.Process(
            target=timer_workers.forked, args=(url, str(chart), str(clock_file), "1", write)
        )  # one delivery per transaction
        child.start()
        os.close(write)
        lines: list[str] = []
        wanted = 1 + rng.randrange(8) if kills < KILLS else 0
        with os.fdopen(read) as out:
            while len(lines) < wanted:  # kill after this many acknowledged deliveries
                line = out.readline()
                if not line:
                    break
                lines.append(line)
            if len(lines) == wanted > 0:
                time.sleep(rng.uniform(0.0, 0.004))  # a random point, often in a transaction
                os.kill(child.pid or 0, signal.SIGKILL)
            lines += out.read().splitlines()
        child.join()
        assert child.exitcode in (0, -signal.SIGKILL), child.exitcode
        killed = child.exitcode == -signal.SIGKILL  # (it may have finished just before)
        kills += killed
        acknowledged += [json.loads(line) for line in lines if line.strip()]
        if not killed:  # everything due at `now` was delivered: time moves on
            if now > last_due:
                if kills >= KILLS:
                    break
                last_due = tickers.create(100, now, 3)
            now += rng.randrange(20, 60)
    assert kills == KILLS
    instances = tickers.count
    history = {
        (f"i{i}", e.event_id): (e.status, e.sequence)
        for i in range(instances)
        for e in runner.history(f"i{i}")
    }
    for instance, event_id, status, version in acknowledged:  # nothing acknowledged is lost
        assert history[(instance, event_id)] == (status, version)
    assert len({(a[0], a[1]) for a in acknowledged}) == len(acknowledged)  # none twice
    _each_timer_took_effect_once(runner, instances)
    for i in range(instances):
        assert runner.verify(f"i{i}").ok
    if url.startswith("sqlite"):
        assert runner.store.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_many_workers_deliver_each_of_10000_timers_once(store_url: str, tmp_path: Path) -> None:
    url = _fast(store_url)
    instances = 1_000
    runner = _created(url, instances, 0)
    chart = write_chart(TICKER, tmp_path, "ticker")
    clock_file = tmp_path / "clock"
    clock_file.write_text(str(T0 + 1_000))  # all 10,000 due
    processes = 8 if url.startswith("postgresql") else 4
    children = [_worker(url, chart, clock_file, 8) for _ in range(processes)]
    for child in children:
        _go(child)
    lines = []
    for child in children:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err
        lines += [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(lines) == instances * TIMERS
    assert Counter(line[2] for line in lines) == {"APPLIED": instances * TIMERS}
    assert len({(line[0], line[1]) for line in lines}) == instances * TIMERS
    assert len({line[0] for line in lines if line[3] == TIMERS}) == instances
    _each_timer_took_effect_once(runner, instances)

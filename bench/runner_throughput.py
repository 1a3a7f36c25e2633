"""Committed events/s of the durable runner, next to the raw rate of the same database.

Run: `python -m bench.runner_throughput` from the repository root (PostgreSQL
must be installed: scripts/ensure-postgres.sh; a throwaway server is started
on loopback with default durability: fsync on, synchronous_commit on).

Each runner figure is `Runner.apply` of a counter chart whose every event
assigns the context and emits one message: one transaction that reads the
instance (locked), checks the event ID, runs the step, inserts the event with
its evidence, updates the instance and inserts the outbox row. Next to it, in
the same run and on the same database, the raw rate: a hand-written
transaction inserting an event row, updating a version row and inserting an
outbox row (the physical limit of one durable commit per event). SQLite runs
in WAL mode with synchronous=FULL. "batched import" is `apply_batch` with
1,000 events of one instance per transaction. Medians of 3 runs.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.transaction import Command
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 3
COUNTER = """
statechart: counter
version: 1
context:
  total: {type: integer, default: 0}
events:
  Incr: {by: integer}
initial: open
states:
  open:
    on:
      Incr:
        do:
          - assign: {total: ctx.total + event.by}
          - emit: {type: Counted, payload: {total: ctx.total}}
"""
RAW_TABLES = (
    "CREATE TABLE raw_instances (id TEXT PRIMARY KEY, version BIGINT NOT NULL, state TEXT)",
    "CREATE TABLE raw_events (instance_id TEXT, sequence BIGINT, event_id TEXT, payload TEXT, "
    "PRIMARY KEY (instance_id, sequence), UNIQUE (instance_id, event_id))",
    "CREATE TABLE raw_outbox (id {serial}, instance_id TEXT, message_id TEXT, payload TEXT, "
    "UNIQUE (instance_id, message_id))",
)


def counter() -> Chart:
    result = compile_source(COUNTER, "counter.yaml")
    assert result.chart is not None
    return Chart(result.chart)


def runner_loop(store: Store, instance: str, events: int, tag: str) -> None:
    """`events` committed applies to one instance."""
    runner = Runner(counter(), store)
    runner.create(instance, exist_ok=True)
    for n in range(events):
        outcome = runner.apply(instance, f"{tag}-{n}", "Incr", {"by": 1})
        assert outcome.applied


def raw_loop(store: Store, instance: str, events: int, tag: str) -> None:
    """The hand-written transaction: insert event, update instance, insert outbox row."""
    with store.write():
        if store.dialect == "postgresql":
            store.execute(
                "INSERT INTO raw_instances VALUES (?, 0, '{}') ON CONFLICT DO NOTHING", (instance,)
            )
        else:
            store.execute("INSERT OR IGNORE INTO raw_instances VALUES (?, 0, '{}')", (instance,))
    version = store.execute("SELECT version FROM raw_instances WHERE id = ?", (instance,))
    base = int(version.fetchone()[0])
    for n in range(events):
        seq = base + n + 1
        with store.write():
            store.execute(
                "INSERT INTO raw_events VALUES (?, ?, ?, ?)",
                (instance, seq, f"{tag}-{n}", '{"by":1}'),
            )
            store.execute(
                "UPDATE raw_instances SET version = ?, state = ? WHERE id = ? AND version = ?",
                (seq, f'{{"total":{seq}}}', instance, seq - 1),
            )
            store.execute(
                "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (?, ?, ?)",
                (instance, f"{tag}-{n}/0", f'{{"total":{seq}}}'),
            )


def _child(args: tuple[str, str, int, str]) -> None:
    url, kind, events, tag = args
    store = open_store(url)
    loop = runner_loop if kind == "runner" else raw_loop
    loop(store, f"{tag}", events, tag)
    store.close()


def rate(url: str, kind: str, workers: int, events: int, run: int) -> float:
    """Committed events/s of `workers` processes, each on its own instance."""
    jobs = [(url, kind, events, f"{kind}-n{workers}-r{run}-w{w}") for w in range(workers)]
    if workers == 1:
        start = time.perf_counter()
        _child(jobs[0])
        return events / (time.perf_counter() - start)
    context = multiprocessing.get_context("fork")
    with context.Pool(workers) as pool:
        pool.map(_child, [(url, kind, 10, f"warm-{j[3]}") for j in jobs])  # connect, compile
        start = time.perf_counter()
        pool.map(_child, jobs)
        return workers * events / (time.perf_counter() - start)


def prepare(url: str) -> None:
    store = open_store(url)
    serial = (
        "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
        if store.dialect == "postgresql"
        else "INTEGER PRIMARY KEY AUTOINCREMENT"
    )
    with store.write():
        for statement in RAW_TABLES:
            store.execute(statement.format(serial=serial))
    store.close()


def median(measure: Callable[[int], float]) -> float:
    return statistics.median(measure(run) for run in range(RUNS))


def measure(url: str, kind: str, workers: int, events: int) -> float:
    return median(lambda run: rate(url, kind, workers, events, run))


def batched(url: str, events: int, run: int) -> float:
    store = open_store(url)
    runner = Runner(counter(), store)
    instance = f"import-{run}"
    runner.create(instance)
    commands = [Command(f"i{n}", "Incr", {"by": 1}) for n in range(events)]
    start = time.perf_counter()
    for k in range(0, events, 1000):
        outcomes = runner.apply_batch(instance, commands[k : k + 1000])
        assert outcomes[-1].applied
    elapsed = time.perf_counter() - start
    store.close()
    return events / elapsed


def row(what: str, runner: float, raw: float) -> None:
    print(f"| {what} | {runner:,.0f} | {raw:,.0f} | {100 * runner / raw:.0f}% |", flush=True)


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print("| store | runner events/s | raw tx/s | runner / raw |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        prepare(url)
        raw = median(lambda r: rate(url, "raw", 1, events, r))
        ours = median(lambda r: rate(url, "runner", 1, events, r))
        row("SQLite, WAL, synchronous=FULL, 1 process", ours, raw)
        imported = median(lambda r: batched(url, 20_000, r))
        what = "SQLite batched import (apply_batch, 1,000 per transaction)"
        print(f"| {what} | {imported:,.0f} | | |")
    with ThrowawayPostgres() as server:
        url = server.create_database("bench")
        prepare(url)
        for workers in (1, 8):
            raw, ours = (measure(url, kind, workers, events) for kind in ("raw", "runner"))
            row(f"PostgreSQL 15, {workers} worker(s)", ours, raw)


if __name__ == "__main__":
    main()

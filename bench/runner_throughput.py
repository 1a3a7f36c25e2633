"""Committed events/s of the durable runner, next to the raw rate of the same database.

Also: group commit (`Runner.apply_many` over 100 instances, 1 to 1,000 events per
transaction) against the raw one-event transaction, and bytes per event on disk.

Run: `python -m bench.runner_throughput` from the repository root (PostgreSQL
must be installed: scripts/ensure-postgres.sh; a throwaway server is started
on loopback with default durability: fsync on, synchronous_commit on).

Each runner figure is `Runner.apply` of a counter chart whose every event
assigns the context and emits one message: one transaction that runs the step
on the row the runner committed last (no read: the database checks it),
updates the instance, inserts the event with its evidence and inserts the
outbox row. "runner, two taking turns" is the general case: two runners (two
connections) alternate on one instance, so each finds its row stale and reads
the instance (locked) and the record of the event ID first. Next to it, in
the same run and on the same database, the raw rate: a hand-written
transaction inserting an event row, updating a version row and inserting an
outbox row (the physical limit of one durable commit per event); on PostgreSQL
also that transaction in psycopg's pipeline mode. On SQLite also "the runner's
statements replayed": the very statements and parameters of `Runner.apply` (recorded
from a runner, then run with `sqlite3` alone): what the runner would reach with no
Python at all, which splits its distance to the raw rate into what its rows and
indexes cost and what its Python costs. And "the floor": the work any runner of this
design must do per event (the payload's text and hash, the engine's step with its
evidence, the evidence, context and message texts) and those statements, written by hand
as one loop with no layers (`fused_loop`, bench/_runner_floor.py; checked to store
exactly what the runner stores before it is timed): how close to the raw rate the
runner could come at best.
SQLite runs in WAL mode with synchronous=OFF (fsync taken out: what the code
costs) and FULL (each commit waits for the disk). Medians of 3 runs, interleaved
with the raw ones, with their range; the ratio is taken run by run. A run of one process
times its events alone: opening the store (on SQLite a `quick_check` of the whole file),
compiling the chart, creating the instance and recording the floor's statements come
before the clock starts (`_child`); N workers are timed together, their setup included.
At FULL the same code runs slower than at OFF, the more so the more Python it is: each
commit's fsync blocks the thread, and what runs after it runs on a cold CPU (the same
instructions per event, callgrind: 486 k at OFF and 487 k at FULL; at OFF with a 200 µs
sleep after each commit instead of the fsync, in one run: raw +12 µs per event, the
statements replayed +20, the floor +41, the runner +48), so "against its statements
replayed" is lower at FULL than at OFF without any work of the runner's being added.

`python -m bench.runner_throughput [EVENTS] [--sqlite-only] [--before REV]`:
`--sqlite-only` skips PostgreSQL, group commit and the bytes; `--before REV` adds,
interleaved with the others, the runner of git revision REV (its `statekit` exported
to a temporary folder and run in a subprocess, timed as the runner here is), with
its ratio to the raw rate, and this tree's runner run the same way in a subprocess of
its own, so that the two are compared alike (a fresh process against this long-lived
one differed by up to about 20% with the same code); those two each write a database of
their own next to the others' (REV refuses a store at a schema it does not know).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._runner_floor import fused_agrees, fused_rate, statements_rate
from bench._runner_loops import (
    RAW_TABLES,
    counter,
    raw_loop,
    raw_pipeline_loop,
    runner_loop,
    turns_loop,
)
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.sqlite import SQLiteStore
from statekit.runner.transaction import Command
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 3

Loop = Callable[[Store, str, int, str], float]
LOOPS: dict[str, Loop] = {
    "runner": runner_loop,
    "turns": turns_loop,
    "raw": raw_loop,
    "raw-pipeline": raw_pipeline_loop,
}


def _child(args: tuple[str, str, int, str]) -> float:
    """Seconds that the events of loop `kind` took, without its setup: opening the store
    (on SQLite a `PRAGMA quick_check` of the whole file, longer as the runs before fill it:
    3 to 26 ms), compiling the chart (1.1 ms), creating the instance (one more commit).
    Timed with the events, the setup weighed four times as much per event at FULL (500
    events a run) as at OFF (2,000): in one run it added 18 µs per event to the raw
    transaction, 23 to the runner and 29 to the floor (`fused_rate`, which also records
    its statements, 10 ms) at FULL, against 6, 13 and 6 at OFF, where the statements
    replayed, timed alone already, had none."""
    url, kind, events, tag = args
    store = open_store(url)
    start = LOOPS[kind](store, f"{tag}", events, tag)
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed


ROOT = Path(__file__).resolve().parents[1]
BEFORE: Path | None = None  # the exported `statekit` of `--before REV`, when given


def export(rev: str, folder: Path) -> Path:
    """The `statekit` package at git revision `rev`, in `folder`."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", rev, "statekit"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def run_in(tree: Path, code: str) -> Any:
    """The value `code` prints last as JSON, run by `python -c` in a subprocess that
    imports `statekit` from `tree` (an `export`, or this repository) and `bench` from
    this repository."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT}"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tree, check=True, capture_output=True,
        text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_before(before: Path, code: str) -> float:
    """`run_in` of code that prints a number."""
    return float(run_in(before, code))


def subprocess_rate(tree: Path, url: str, events: int, tag: str) -> float:
    """`rate(url, "runner", 1, …)` measured in a subprocess on the `statekit` of `tree`
    (`BEFORE`, or this repository)."""
    return run_before(
        tree,
        "import json, bench.runner_throughput as b; "
        f"print(json.dumps({events} / b._child(({url!r}, 'runner', {events}, {tag!r}))))",
    )


def own_database(url: str, name: str) -> str:
    """A SQLite database next to the one of `url`, with the same settings, for the runner of
    `--before REV` and this tree's runner compared with it: each opens a database of its
    own, since a store at a schema that REV does not know yet is refused by it."""
    path, query = url.split("?", 1)
    return f"{path.removesuffix('.db')}-{name}.db?{query}"


def rate(url: str, kind: str, workers: int, events: int, run: int) -> float:
    """Committed events/s of `workers` processes, each on its own instance."""
    jobs = [(url, kind, events, f"{kind}-n{workers}-r{run}-w{w}") for w in range(workers)]
    if kind == "before":
        assert BEFORE is not None
        return subprocess_rate(BEFORE, own_database(url, kind), events, jobs[0][3])
    if kind == "this":
        return subprocess_rate(ROOT, own_database(url, kind), events, jobs[0][3])
    if kind == "statements":
        return statements_rate(url, events, jobs[0][3])
    if kind == "fused":
        return fused_rate(url, events, jobs[0][3])
    if workers == 1:
        return events / _child(jobs[0])
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


def runs(measure: Callable[[int], float]) -> list[float]:
    """`RUNS` measurements, interleaved by the caller with those they are compared to."""
    return [measure(run) for run in range(RUNS)]


def shown(values: list[float]) -> str:
    """Median and range."""
    return f"{statistics.median(values):,.0f} ({min(values):,.0f} to {max(values):,.0f})"


def pair(url: str, workers: int, events: int, kinds: tuple[str, ...]) -> dict[str, list[float]]:
    """Each kind measured `RUNS` times, the kinds interleaved run by run."""
    got: dict[str, list[float]] = {k: [] for k in kinds}
    for run in range(RUNS):
        for kind in kinds:
            got[kind].append(rate(url, kind, workers, events, run))
    return got


def grouped(url: str, batch: int, events: int, run: int) -> float:
    """`apply_many` of `events` over 100 instances, `batch` events per transaction."""
    store = open_store(url)
    runner = Runner(counter(), store)
    names = [f"g{batch}-r{run}-{k}" for k in range(100)]
    for name in names:
        runner.create(name)
    commands = [(names[n % 100], Command(f"i{n}", "Incr", {"by": 1})) for n in range(events)]
    start = time.perf_counter()
    for k in range(0, events, batch):
        items = runner.apply_many(commands[k : k + batch])
        assert all(getattr(i, "applied", False) for i in items)
    elapsed = time.perf_counter() - start
    store.close()
    return events / elapsed


def row(what: str, ours: list[float], raw: list[float]) -> None:
    ratio = [a / b for a, b in zip(ours, raw, strict=True)]
    print(
        f"| {what} | {shown(ours)} | {shown(raw)} | {100 * statistics.median(ratio):.0f}% "
        f"({100 * min(ratio):.0f} to {100 * max(ratio):.0f}%) |",
        flush=True,
    )


def group_rows(url: str, what: str, raw: list[float], events: int) -> None:
    for batch in (1, 10, 100, 1000):
        ours = runs(lambda r, b=batch: grouped(url, b, min(events * b, 20_000), r))  # type: ignore[misc]
        row(f"{what}, `apply_many`, {batch} per transaction", ours, raw)


def bytes_per_event(events: int) -> None:
    """Bytes on disk per event (SQLite `dbstat`: table and index pages), the runner's rows
    (event, instance, outbox) next to the raw transaction's."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bytes.db'}?synchronous=OFF"
        prepare(url)
        store = open_store(url)
        runner = Runner(counter(), store)
        for k in range(10):
            runner.create(f"b{k}")
        for n in range(events):
            assert runner.apply(f"b{n % 10}", f"evt-{n}", "Incr", {"by": 1}).applied
        raw_loop(store, "raw", events, "evt")
        pages = store.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        store.close()
    sizes = dict(pages)
    tables = {"raw": ("raw_events", "raw_outbox"), "runner": ("statekit_events", "statekit_outbox")}
    indexes = {
        "raw": ("sqlite_autoindex_raw_events_1", "sqlite_autoindex_raw_events_2",
                "sqlite_autoindex_raw_outbox_1"),
        "runner": ("sqlite_autoindex_statekit_events_1", "sqlite_autoindex_statekit_events_2",
                   "sqlite_autoindex_statekit_outbox_1", "statekit_outbox_pending",
                   "statekit_outbox_status"),
    }  # fmt: skip
    total = {k: sum(sizes.get(n, 0) for n in (*tables[k], *indexes[k])) for k in tables}
    own = ("statekit_events", "sqlite_autoindex_statekit_events_1",
           "sqlite_autoindex_statekit_events_2")  # fmt: skip
    events_only = sum(sizes.get(n, 0) for n in own)
    print(
        f"\nbytes per event on disk (SQLite dbstat, {events:,} events over 10 instances): "
        f"runner {total['runner'] / events:.0f} B (events table and its indexes "
        f"{events_only / events:.0f} B), raw {total['raw'] / events:.0f} B: "
        f"{total['runner'] / total['raw']:.2f}x"
    )


def wal_pages(events: int) -> None:
    """Pages each commit writes to the WAL (SQLite, `synchronous=OFF`), the runner's event
    next to the raw transaction's: what the commit copies and checksums, counted rather
    than timed (the frames appended over `events` commits, checkpoints held off; each
    index an event inserts into is one more page)."""
    counts: dict[str, float] = {}
    for kind, loop in (("raw", raw_loop), ("runner", runner_loop)):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "wal.db"
            url = f"sqlite:///{path}?synchronous=OFF"
            prepare(url)
            store = open_store(url)
            loop(store, "w", 1, "first")  # the instance and its first event
            assert isinstance(store, SQLiteStore)
            store.connection.execute("PRAGMA wal_autocheckpoint = 0")
            store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            loop(store, "w", events, "wal")
            size = (path.parent / "wal.db-wal").stat().st_size
            page = store.connection.execute("PRAGMA page_size").fetchone()[0]
            store.close()
        counts[kind] = (size - 32) / (page + 24) / events  # the header; a frame's header
    print(
        f"\nWAL pages per commit (SQLite, {events:,} events of one instance): runner "
        f"{counts['runner']:.1f}, raw {counts['raw']:.1f}"
    )


def main() -> None:
    global BEFORE
    args = sys.argv[1:]
    before = args[args.index("--before") + 1] if "--before" in args else None
    events = int(args[0]) if args and args[0].isdigit() else 2000
    print("| store | runner events/s | raw tx/s | runner / raw |")
    print("|---|---|---|---|")
    fused_agrees(200)  # the floor is timed only once it stores what the runner does
    with tempfile.TemporaryDirectory() as folder:
        BEFORE = export(before, Path(folder) / "before") if before else None
        for sync in ("OFF", "FULL"):
            url = f"sqlite:///{Path(folder) / f'bench-{sync}.db'}?synchronous={sync}"
            prepare(url)
            n = events if sync == "OFF" else events // 4
            kinds = ("raw", "runner", "turns", "statements", "fused",
                     *(("before", "this") if before else ()))  # fmt: skip
            got = pair(url, 1, n, kinds)
            row(f"SQLite, WAL, synchronous={sync}, 1 process", got["runner"], got["raw"])
            row(f"SQLite {sync}, the runner's statements replayed (no Python)",
                got["statements"], got["raw"])  # fmt: skip
            row(f"SQLite {sync}, runner against its statements replayed", got["runner"],
                got["statements"])  # fmt: skip
            row(f"SQLite {sync}, the floor: the necessary work fused by hand", got["fused"],
                got["raw"])  # fmt: skip
            row(f"SQLite {sync}, runner against the floor", got["runner"], got["fused"])
            row(f"SQLite {sync}, runner, two taking turns (reading first)", got["turns"],
                got["raw"])  # fmt: skip
            if before:
                row(f"SQLite {sync}, runner of {before}", got["before"], got["raw"])
                row(f"SQLite {sync}, this runner against {before}'s, both in a subprocess",
                    got["this"], got["before"])  # fmt: skip
            if sync == "FULL" and "--sqlite-only" not in args:
                group_rows(url, "SQLite FULL", got["raw"], n // 4)
    wal_pages(500)
    if "--sqlite-only" in args:
        return
    with ThrowawayPostgres() as server:
        url = server.create_database("bench")
        prepare(url)
        for workers in (1, 8):
            kinds = ("raw", "raw-pipeline", "runner", *(("turns",) if workers == 1 else ()))
            got = pair(url, workers, events // workers * (2 if workers > 1 else 1), kinds)
            row(f"PostgreSQL, {workers} worker(s)", got["runner"], got["raw"])
            if workers == 1:
                row("PostgreSQL, runner, two taking turns (reading first)", got["turns"],
                    got["raw"])  # fmt: skip
            row(f"PostgreSQL, {workers} worker(s), vs raw in pipeline mode", got["runner"],
                got["raw-pipeline"])  # fmt: skip
            if workers == 1:
                group_rows(url, "PostgreSQL", got["raw"], events // 8)
    bytes_per_event(5000)


if __name__ == "__main__":
    main()

"""Committed events/s of the async runner with 1, 10 and 100 instances advanced at once,
next to the sync runner and the raw async drivers, in the same run.

Run: `python -m bench.async_runner [EVENTS] [--sqlite-only]` from the repository root
(PostgreSQL must be installed: scripts/ensure-postgres.sh; a throwaway server is
started on loopback with default durability).

Each figure commits EVENTS events of the counter chart of `bench/runner_throughput.py`
(assign, emit one message) spread over C instances (C = 1, 10, 100), each instance's
events in order:

- **async runner**: `AsyncRunner.apply`, C tasks at once on one event loop, each
  advancing its own instance; SQLite over 1 connection (one writer at a time anyway),
  PostgreSQL over min(C, 10) connections (`connections=`).
- **sync runner**: `Runner.apply` on one connection in one thread, the C instances in
  turn: what a blocking service does, and what the async runner runs on its threads.
- **raw async driver**: the hand-written three-statement transaction of
  `runner_throughput` (insert the event, update the instance's version, insert the
  outbox row), C tasks at once: on SQLite through aiosqlite (one hop to its thread per
  statement) and, for the choice the async runner makes, through sqlite3 on a thread
  of its own (one hop per transaction); on PostgreSQL through psycopg's
  `AsyncConnection` over min(C, 10) connections, and through sync psycopg on a thread
  per connection (one hop per transaction).

SQLite runs in WAL mode with `synchronous=OFF` (what the code costs: the hop between the
loop and a thread is then most visible) and `FULL` (each commit waits for the disk).
First, the hop itself: an awaited call of a function that does nothing on a
`ConnectionThread`, what every async runner call costs beyond the sync call.
Medians of 3 runs, the kinds interleaved run by run, with their range; ratios are taken
run by run against the sync runner.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg

from bench._runner_loops import counter
from bench.runner_throughput import prepare
from statekit.aio import AsyncRunner
from statekit.aio.connection_thread import ConnectionThread
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 3
CONCURRENCY = (1, 10, 100)
INSERT_EVENT = "INSERT INTO raw_events VALUES (?, ?, ?, ?)"
MOVE = "UPDATE raw_instances SET version = ?, state = ? WHERE id = ? AND version = ?"
INSERT_MESSAGE = "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (?, ?, ?)"
RawTransaction = Callable[[str, int, str], Awaitable[None]]


def connections_for(url: str, instances: int) -> int:
    return 1 if url.startswith("sqlite") else min(instances, 10)


def names(tag: str, instances: int) -> list[str]:
    return [f"{tag}-{k}" for k in range(instances)]


async def async_runner(url: str, instances: int, events: int, tag: str) -> float:
    chart = counter()
    async with await AsyncRunner.open(
        chart, url, connections=connections_for(url, instances)
    ) as runner:
        ids = names(tag, instances)
        await asyncio.gather(*(runner.create(i) for i in ids))
        each = events // instances

        async def advance(instance: str) -> None:
            for n in range(each):
                outcome = await runner.apply(instance, f"e{n}", "Incr", {"by": 1})
                assert outcome.applied

        start = time.perf_counter()
        await asyncio.gather(*(advance(i) for i in ids))
        return each * instances / (time.perf_counter() - start)


def sync_runner(url: str, instances: int, events: int, tag: str) -> float:
    with open_store(url) as store:
        runner = Runner(counter(), store)
        ids = names(tag, instances)
        for i in ids:
            runner.create(i)
        each = events // instances
        start = time.perf_counter()
        for n in range(each):
            for i in ids:
                assert runner.apply(i, f"e{n}", "Incr", {"by": 1}).applied
        return each * instances / (time.perf_counter() - start)


async def raw_rate(
    instances: int, events: int, tag: str, lanes: list[tuple[asyncio.Lock, RawTransaction]]
) -> float:
    """C tasks, each committing its instance's raw transactions on lane (task mod lanes),
    one transaction at a time per lane."""
    ids = names(tag, instances)
    each = events // instances

    async def advance(k: int, instance: str) -> None:
        lock, transaction = lanes[k % len(lanes)]
        for n in range(each):
            async with lock:
                await transaction(instance, n + 1, f"e{n}")

    start = time.perf_counter()
    await asyncio.gather(*(advance(k, i) for k, i in enumerate(ids)))
    return each * instances / (time.perf_counter() - start)


def _params(instance: str, seq: int, event_id: str) -> tuple[tuple[Any, ...], ...]:
    return (
        (instance, seq, event_id, '{"by":1}'),
        (seq, f'{{"total":{seq}}}', instance, seq - 1),
        (instance, f"{event_id}/0", f'{{"total":{seq}}}'),
    )


def _seed(conn: Any, ids: list[str], placeholder: str) -> None:
    for i in ids:
        conn.execute(f"INSERT INTO raw_instances VALUES ({placeholder}, 0, '{{}}')", (i,))


async def raw_aiosqlite(path: str, instances: int, events: int, tag: str) -> float:
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("PRAGMA busy_timeout = 10000")
        await db.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
        for i in names(tag, instances):
            await db.execute("INSERT INTO raw_instances VALUES (?, 0, '{}')", (i,))

        async def transaction(instance: str, seq: int, event_id: str) -> None:
            event, move, message = _params(instance, seq, event_id)
            await db.execute("BEGIN IMMEDIATE")
            await db.execute(INSERT_EVENT, event)
            await db.execute(MOVE, move)
            await db.execute(INSERT_MESSAGE, message)
            await db.execute("COMMIT")

        return await raw_rate(instances, events, tag, [(asyncio.Lock(), transaction)])


async def raw_sqlite_thread(path: str, instances: int, events: int, tag: str) -> float:
    thread = ConnectionThread("bench-sqlite")
    conn = await thread.run(sqlite3.connect, path, isolation_level=None, check_same_thread=False)
    try:
        await thread.run(conn.execute, f"PRAGMA synchronous = {SYNCHRONOUS}")
        await thread.run(_seed, conn, names(tag, instances), "?")

        def commit(instance: str, seq: int, event_id: str) -> None:
            event, move, message = _params(instance, seq, event_id)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(INSERT_EVENT, event)
            conn.execute(MOVE, move)
            conn.execute(INSERT_MESSAGE, message)
            conn.execute("COMMIT")

        async def transaction(instance: str, seq: int, event_id: str) -> None:
            await thread.run(commit, instance, seq, event_id)

        return await raw_rate(instances, events, tag, [(asyncio.Lock(), transaction)])
    finally:
        await thread.run(conn.close)
        thread.shutdown()


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


async def raw_psycopg_async(url: str, instances: int, events: int, tag: str) -> float:
    conns = [
        await psycopg.AsyncConnection.connect(url, autocommit=True)
        for _ in range(connections_for(url, instances))
    ]
    try:
        for i in names(tag, instances):
            await conns[0].execute(_pg("INSERT INTO raw_instances VALUES (?, 0, '{}')"), (i,))

        def on(conn: psycopg.AsyncConnection[Any]) -> RawTransaction:
            async def transaction(instance: str, seq: int, event_id: str) -> None:
                event, move, message = _params(instance, seq, event_id)
                async with conn.transaction():
                    await conn.execute(_pg(INSERT_EVENT), event)
                    await conn.execute(_pg(MOVE), move)
                    await conn.execute(_pg(INSERT_MESSAGE), message)

            return transaction

        lanes = [(asyncio.Lock(), on(c)) for c in conns]
        return await raw_rate(instances, events, tag, lanes)
    finally:
        for c in conns:
            await c.close()


async def raw_psycopg_threads(url: str, instances: int, events: int, tag: str) -> float:
    count = connections_for(url, instances)
    threads = [ConnectionThread(f"bench-pg-{k}") for k in range(count)]
    conns = [await t.run(psycopg.connect, url, autocommit=True) for t in threads]
    try:
        await threads[0].run(_seed, conns[0], names(tag, instances), "%s")

        def on(thread: ConnectionThread, conn: psycopg.Connection[Any]) -> RawTransaction:
            def commit(instance: str, seq: int, event_id: str) -> None:
                event, move, message = _params(instance, seq, event_id)
                with conn.transaction():
                    conn.execute(_pg(INSERT_EVENT), event)
                    conn.execute(_pg(MOVE), move)
                    conn.execute(_pg(INSERT_MESSAGE), message)

            async def transaction(instance: str, seq: int, event_id: str) -> None:
                await thread.run(commit, instance, seq, event_id)

            return transaction

        lanes = [(asyncio.Lock(), on(t, c)) for t, c in zip(threads, conns, strict=True)]
        return await raw_rate(instances, events, tag, lanes)
    finally:
        for t, c in zip(threads, conns, strict=True):
            await t.run(c.close)
            t.shutdown()


async def hop_microseconds(calls: int) -> float:
    """What one call costs the async runner beyond the sync one: an awaited call of a
    function that does nothing on a `ConnectionThread`, in µs."""
    thread = ConnectionThread("bench-hop")
    try:
        await thread.run(int)  # the thread started
        start = time.perf_counter()
        for _ in range(calls):
            await thread.run(int)
        return (time.perf_counter() - start) / calls * 1e6
    finally:
        thread.shutdown()


def shown(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f} to {max(values):,.0f})"


def ratio(ours: list[float], base: list[float]) -> str:
    r = [a / b for a, b in zip(ours, base, strict=True)]
    return f"{statistics.median(r):.2f}x ({min(r):.2f} to {max(r):.2f})"


def measure(store: str, url: str, kinds: dict[str, Callable[[int, int, str], float]]) -> None:
    events = EVENTS if store.startswith("SQLite") else EVENTS // 2
    for instances in CONCURRENCY:
        got: dict[str, list[float]] = {k: [] for k in kinds}
        for run in range(RUNS):
            for kind, rate in kinds.items():
                got[kind].append(rate(instances, events, f"{kind}-c{instances}-r{run}"))
        for kind in kinds:
            print(
                f"| {store} | {instances} | {kind} | {shown(got[kind])} | "
                f"{ratio(got[kind], got['sync runner'])} |",
                flush=True,
            )


def sqlite_kinds(url: str) -> dict[str, Callable[[int, int, str], float]]:
    path = url.removeprefix("sqlite:///").partition("?")[0]
    return {
        "sync runner": lambda c, e, t: sync_runner(url, c, e, t),
        "async runner": lambda c, e, t: asyncio.run(async_runner(url, c, e, t)),
        "raw aiosqlite": lambda c, e, t: asyncio.run(raw_aiosqlite(path, c, e, t)),
        "raw sqlite3 on a thread": lambda c, e, t: asyncio.run(raw_sqlite_thread(path, c, e, t)),
    }


def postgres_kinds(url: str) -> dict[str, Callable[[int, int, str], float]]:
    return {
        "sync runner": lambda c, e, t: sync_runner(url, c, e, t),
        "async runner": lambda c, e, t: asyncio.run(async_runner(url, c, e, t)),
        "raw psycopg AsyncConnection": lambda c, e, t: asyncio.run(raw_psycopg_async(url, c, e, t)),
        "raw sync psycopg, a thread per connection": lambda c, e, t: asyncio.run(
            raw_psycopg_threads(url, c, e, t)
        ),
    }


EVENTS = 2000
SYNCHRONOUS = "FULL"


def main() -> None:
    global EVENTS, SYNCHRONOUS
    args = sys.argv[1:]
    EVENTS = int(args[0]) if args and args[0].isdigit() else 2000
    hops = [asyncio.run(hop_microseconds(2000)) for _ in range(RUNS)]
    print(f"one hop between the event loop and a connection's thread: {shown(hops)} µs\n")
    print("| store | instances at once | what | events/s, median (range) | / sync runner |")
    print("|---|---|---|---|---|")
    for SYNCHRONOUS in ("OFF", "FULL"):
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{Path(folder) / 'bench.db'}?synchronous={SYNCHRONOUS}"
            prepare(url)
            measure(f"SQLite synchronous={SYNCHRONOUS}", url, sqlite_kinds(url))
    if "--sqlite-only" in args:
        return
    with ThrowawayPostgres() as server:
        url = server.create_database("bench")
        prepare(url)
        measure("PostgreSQL", url, postgres_kinds(url))


if __name__ == "__main__":
    main()

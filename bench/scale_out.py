"""Scale-out: events/s of 1, 2, 4 and 8 processes on one PostgreSQL server and on two shards.

Run: `python -m bench.scale_out [EVENTS_PER_PROCESS] [--same-server]` from the
repository root (PostgreSQL must be installed: scripts/ensure-postgres.sh;
throwaway servers are started on loopback with default durability).

Each process opens its own connections, applies EVENTS_PER_PROCESS events of
`runner_throughput`'s counter chart (one transaction each: `Runner.apply`, or
`ShardedRunner.apply` over two shards) and the processes start together (a
barrier; the clock runs from its release until the last one is done):

- spread: each event to one of 1,000 instances chosen at random (rows rarely
  meet; what limits is the server: its WAL flushes and its CPU);
- hot: every event of every process to one of 4 instances (each instance's
  row lock is held for the decision and the commit, so they queue on it).

Next to each, measured in the same run and interleaved run by run, the raw
transaction: the same writes as plain SQL through psycopg, no statekit
(`SELECT … FOR UPDATE` of the instance's version, insert the event, update the
instance, insert the outbox row, COMMIT), routed to the same shard by the same
hash. Medians of `RUNS` with their range; ratios taken run by run.

The two shards are two servers on this machine (`--same-server`: two databases
of one server): sharding is for splitting what one server serialises, its WAL
and its CPU, and two databases of one server still share its WAL. On a machine
of 2 cores the two servers share the same cores and disk, so the figures there
measure what routing costs and how much of one server's limit was its WAL
flush queue, not the gain of a second machine.
"""

from __future__ import annotations

import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench._runner_loops import counter
from bench.runner_throughput import RUNS, prepare
from statekit.runner.runner import Runner
from statekit.runner.shard_layout import shard_of
from statekit.runner.sharding import ShardedRunner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres

PROCESSES = (1, 2, 4, 8)
SPREAD = [f"s{n}" for n in range(1000)]
HOT = [f"h{n}" for n in range(4)]
WORKLOADS = {"spread": SPREAD, "hot": HOT}


def _statekit_loop(urls: Sequence[str]) -> Callable[[str, str], None]:
    """One process's apply of one event, over `urls` (one store, or a shard set)."""
    chart = counter()
    runner: Runner | ShardedRunner
    if len(urls) == 1:
        runner = Runner(chart, open_store(urls[0]))
    else:
        runner = ShardedRunner.open(chart, urls)

    def apply(instance: str, event_id: str) -> None:
        assert runner.apply(instance, event_id, "Incr", {"by": 1}).applied

    return apply


def _raw_loop(urls: Sequence[str]) -> Callable[[str, str], None]:
    """One process's raw transaction of one event, routed as the router routes it."""
    import psycopg  # the optional dependency, only where a server is used

    connections = [psycopg.connect(url) for url in urls]

    def apply(instance: str, event_id: str) -> None:
        conn = connections[shard_of(instance, len(connections))]
        with conn.transaction():
            row = conn.execute(
                "SELECT version FROM raw_instances WHERE id = %s FOR UPDATE", (instance,)
            ).fetchone()
            assert row is not None  # laid out by `lay_out`
            seq = int(row[0]) + 1
            conn.execute(
                "INSERT INTO raw_events VALUES (%s, %s, %s, %s)",
                (instance, seq, event_id, '{"by":1}'),
            )
            conn.execute(
                "UPDATE raw_instances SET version = %s, state = %s WHERE id = %s",
                (seq, f'{{"total":{seq}}}', instance),
            )
            conn.execute(
                "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (%s, %s, %s)",
                (instance, f"{event_id}/0", f'{{"total":{seq}}}'),
            )

    return apply


LOOPS = {"statekit": _statekit_loop, "raw": _raw_loop}


def _child(
    urls: Sequence[str], kind: str, workload: str, events: int, tag: str, barrier: Any
) -> None:
    apply = LOOPS[kind](urls)
    pick = random.Random(tag).choice
    instances = WORKLOADS[workload]
    apply(pick(instances), f"{tag}-warm")  # connected, compiled, its first statements sent
    barrier.wait()
    for n in range(events):
        apply(pick(instances), f"{tag}-{n}")


def rate(
    urls: Sequence[str], kind: str, workload: str, processes: int, events: int, tag: str
) -> float:
    """Committed events/s of `processes` processes started together."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(processes + 1)
    children = [
        context.Process(target=_child, args=(urls, kind, workload, events, f"{tag}-p{p}", barrier))
        for p in range(processes)
    ]
    for child in children:
        child.start()
    barrier.wait()
    start = time.perf_counter()
    for child in children:
        child.join()
    elapsed = time.perf_counter() - start
    if any(child.exitcode for child in children):
        raise SystemExit(f"a {kind} process failed ({tag})")
    return processes * events / elapsed


def lay_out(urls: Sequence[str]) -> None:
    """The raw tables and every instance, statekit's and raw, in the shard it routes to."""
    for url in urls:
        prepare(url)
    runner: Runner | ShardedRunner
    if len(urls) == 1:
        runner = Runner(counter(), open_store(urls[0]))
    else:
        runner = ShardedRunner.open(counter(), urls)
    for instance in SPREAD + HOT:
        runner.create(instance)
        store = runner.store if isinstance(runner, Runner) else runner.shards.store_for(instance)
        with store.write():
            store.execute("INSERT INTO raw_instances VALUES (?, 0, '{}')", (instance,))
    if isinstance(runner, Runner):
        runner.store.close()
    else:
        runner.close()


def shown(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f} to {max(values):,.0f})"


def ratio(ours: list[float], raw: list[float]) -> str:
    r = [a / b for a, b in zip(ours, raw, strict=True)]
    return f"{100 * statistics.median(r):.0f}% ({100 * min(r):.0f} to {100 * max(r):.0f}%)"


def main() -> None:
    args = sys.argv[1:]
    same_server = "--same-server" in args
    args = [a for a in args if a != "--same-server"]
    events = int(args[0]) if args else 200
    where = "two databases of one server" if same_server else "two servers on this machine"
    print(
        f"PostgreSQL on loopback, default durability; {events} events per process, {RUNS} runs "
        f"interleaved; two shards: {where}"
    )
    servers = [ThrowawayPostgres().start() for _ in range(1 if same_server else 2)]
    try:
        one = [servers[0].create_database("one")]
        two = [servers[0].create_database("shard_a"), servers[-1].create_database("shard_b")]
        lay_out(one)
        lay_out(two)
        print(
            "\n| target | instances | processes | statekit ev/s | raw tx/s | statekit/raw |\n"
            "|---|---|---|---|---|---|"
        )
        for target, urls in (("one server", one), ("two shards", two)):
            for workload in WORKLOADS:
                for processes in PROCESSES:
                    got: dict[str, list[float]] = {"statekit": [], "raw": []}
                    for run in range(RUNS):
                        for kind in got:
                            tag = f"{kind}-{target[:3]}-{workload}-{processes}-{run}"
                            got[kind].append(rate(urls, kind, workload, processes, events, tag))
                    print(
                        f"| {target} | {workload} | {processes} | {shown(got['statekit'])} | "
                        f"{shown(got['raw'])} | {ratio(got['statekit'], got['raw'])} |",
                        flush=True,
                    )
    finally:
        for server in servers:
            server.stop()


if __name__ == "__main__":
    main()

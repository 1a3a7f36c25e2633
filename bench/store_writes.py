"""The runner's writes: PostgreSQL events/s against the raw transaction, and bytes per event.

Run: `python -m bench.store_writes [EVENTS] [--before REV]` from the repository
root (PostgreSQL must be installed: scripts/ensure-postgres.sh; a throwaway
server is started on loopback with default durability).

- PostgreSQL, 1 and 8 workers (processes, each on its own instance):
  `Runner.apply` of `runner_throughput`'s counter chart next to the raw
  5-statement transaction (five round trips on the connection; also as
  `runner_throughput` sends it through `Store.execute`, which now sends the
  BEGIN with the first insert), in psycopg's pipeline mode, and as one query of
  five statements (`raw_query_loop`: one round trip, the least client work),
  on the same server, interleaved run by run (medians of 3 with their range;
  ratios taken run by run).
- Bytes per event on disk: 5,000 events over 10 instances, the event and outbox
  tables with all their indexes against the raw transaction's two tables with
  theirs: SQLite from `dbstat`, PostgreSQL from `pg_total_relation_size`.

`--before REV`: the same measurements of the code at git revision REV (its
`statekit` package exported to a temporary folder and run in a subprocess, on
its own database of the same server), interleaved with this tree's.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._runner_loops import counter, raw_loop
from bench.runner_throughput import LOOPS, RUNS, export, prepare, rate, run_in
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.testing.postgres_server import ThrowawayPostgres

RUNNER_TABLES = ("statekit_events", "statekit_outbox")
RAW_TABLES = ("raw_events", "raw_outbox")


def raw_plain_loop(store: Store, instance: str, events: int, tag: str) -> float:
    """The raw transaction as five round trips on the psycopg connection itself (BEGIN,
    insert event, update version row, insert outbox row, COMMIT): the plain limit, which
    `Store.execute` (it sends a BEGIN with the first statement) no longer is. Returns when
    the events began (`runner_throughput._child` times them alone)."""
    raw_loop(store, instance, 0, tag)  # the version row
    conn = store.connection
    version = conn.execute("SELECT version FROM raw_instances WHERE id = %s", (instance,))
    base = int(version.fetchone()[0])
    start = time.perf_counter()
    for n in range(events):
        seq = base + n + 1
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO raw_events VALUES (%s, %s, %s, %s)",
            (instance, seq, f"{tag}-{n}", '{"by":1}'),
        )
        conn.execute(
            "UPDATE raw_instances SET version = %s, state = %s WHERE id = %s AND version = %s",
            (seq, f'{{"total":{seq}}}', instance, seq - 1),
        )
        conn.execute(
            "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (%s, %s, %s)",
            (instance, f"{tag}-{n}/0", f'{{"total":{seq}}}'),
        )
        conn.execute("COMMIT")
    return start


def raw_query_loop(store: Store, instance: str, events: int, tag: str) -> float:
    """The raw transaction as one query of five statements (BEGIN, the three writes, COMMIT;
    parameters bound on the client by psycopg's `ClientCursor`): one round trip and the
    least client work, the fastest form of the raw transaction found on this machine;
    when the events began."""
    import psycopg

    raw_loop(store, instance, 0, tag)  # the version row
    conn = store.connection
    version = conn.execute("SELECT version FROM raw_instances WHERE id = %s", (instance,))
    base = int(version.fetchone()[0])
    cursor = psycopg.ClientCursor(conn)
    query = (
        "BEGIN; INSERT INTO raw_events VALUES (%s, %s, %s, %s); "
        "UPDATE raw_instances SET version = %s, state = %s WHERE id = %s AND version = %s; "
        "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (%s, %s, %s); COMMIT"
    )
    start = time.perf_counter()
    for n in range(events):
        seq = base + n + 1
        state = f'{{"total":{seq}}}'
        cursor.execute(
            query,
            (instance, seq, f"{tag}-{n}", '{"by":1}', seq, state, instance, seq - 1,
             instance, f"{tag}-{n}/0", state),
        )  # fmt: skip
    return start


LOOPS["raw-plain"] = raw_plain_loop
LOOPS["raw-query"] = raw_query_loop


def fill(url: str, events: int) -> None:
    """`events` counter events over 10 instances, and as many raw transactions."""
    store = open_store(url)
    runner = Runner(counter(), store)
    for k in range(10):
        runner.create(f"b{k}")
    for n in range(events):
        assert runner.apply(f"b{n % 10}", f"evt-{n}", "Incr", {"by": 1}).applied
    raw_loop(store, "raw", events, "evt")
    store.close()


def sizes(url: str) -> dict[str, int]:
    """Bytes on disk of each table with its indexes."""
    store = open_store(url)
    if store.dialect == "sqlite":
        rows = store.execute(
            "SELECT m.tbl_name, SUM(d.pgsize) FROM dbstat d JOIN sqlite_master m "
            "ON m.name = d.name GROUP BY m.tbl_name"
        ).fetchall()
    else:
        rows = store.execute(
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
            "AND relname IN ('statekit_events', 'statekit_outbox', 'raw_events', 'raw_outbox')"
        ).fetchall()
    store.close()
    return {str(r[0]): int(r[1]) for r in rows}


def bytes_per_event(url: str, events: int) -> dict[str, float]:
    """Bytes per event: the runner's event and outbox tables, the raw ones."""
    prepare(url)
    fill(url, events)
    got = sizes(url)
    return {
        "runner": sum(got.get(t, 0) for t in RUNNER_TABLES) / events,
        "events": got.get("statekit_events", 0) / events,
        "outbox": got.get("statekit_outbox", 0) / events,
        "raw": sum(got.get(t, 0) for t in RAW_TABLES) / events,
    }


def _before(tree: Path, call: str) -> Any:
    """`call` (an expression over this module's names) evaluated by the code in `tree`."""
    return run_in(tree, f"import json, bench.store_writes as b; print(json.dumps(b.{call}))")


def shown(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f} to {max(values):,.0f})"


def ratio(ours: list[float], limit: list[float]) -> str:
    r = [a / b for a, b in zip(ours, limit, strict=True)]
    return f"{100 * statistics.median(r):.0f}% ({100 * min(r):.0f} to {100 * max(r):.0f}%)"


def main() -> None:
    args = sys.argv[1:]
    before = None
    if "--before" in args:
        at = args.index("--before")
        before = args[at + 1]
        del args[at : at + 2]
    events = int(args[0]) if args else 2000
    with tempfile.TemporaryDirectory() as folder:
        tree = export(before, Path(folder) / "before") if before else None
        print(f"PostgreSQL 15 on loopback, {events} events per run, {RUNS} runs interleaved")
        with ThrowawayPostgres() as server:
            url = server.create_database("after")
            prepare(url)
            old_url = server.create_database("before") if tree else ""
            if tree is not None:
                _before(tree, f"prepare({old_url!r})")
            for workers in (1, 8):
                n = events if workers == 1 else events // 4
                kinds = ("raw-plain", "raw", "raw-pipeline", "raw-query", "runner")
                got: dict[str, list[float]] = {k: [] for k in kinds}
                if tree is not None:
                    got["before"] = []
                for run in range(RUNS):
                    for kind in kinds:
                        got[kind].append(rate(url, kind, workers, n, run))
                    if tree is not None:
                        call = f"rate({old_url!r}, 'runner', {workers}, {n}, {run})"
                        got["before"].append(float(_before(tree, call)))
                print(f"\n{workers} worker(s): runner {shown(got['runner'])} ev/s")
                print(f"  raw, 5 round trips {shown(got['raw-plain'])} tx/s: runner/raw "
                      f"{ratio(got['runner'], got['raw-plain'])}")  # fmt: skip
                print(f"  raw through Store (BEGIN with the first insert) {shown(got['raw'])} "
                      f"tx/s: runner/that {ratio(got['runner'], got['raw'])}")  # fmt: skip
                print(f"  raw pipelined {shown(got['raw-pipeline'])} tx/s: runner/pipelined "
                      f"{ratio(got['runner'], got['raw-pipeline'])}")  # fmt: skip
                print(f"  raw as one query {shown(got['raw-query'])} tx/s: runner/that "
                      f"{ratio(got['runner'], got['raw-query'])}")  # fmt: skip
                if tree is not None:
                    print(f"  before ({before}) {shown(got['before'])} ev/s: before/raw "
                          f"{ratio(got['before'], got['raw-plain'])}; after/before "
                          f"{ratio(got['runner'], got['before'])}")  # fmt: skip
            pg = bytes_per_event(server.create_database("bytes"), 5000)
            pg_old = (
                _before(tree, f"bytes_per_event({server.create_database('bytes_old')!r}, 5000)")
                if tree
                else None
            )
        sqlite = bytes_per_event(f"sqlite:///{Path(folder) / 'b.db'}?synchronous=OFF", 5000)
        old_sqlite = f"sqlite:///{Path(folder) / 'old.db'}?synchronous=OFF"
        sqlite_old = _before(tree, f"bytes_per_event({old_sqlite!r}, 5000)") if tree else None
    print("\nbytes per event (5,000 events over 10 instances; event + outbox tables with indexes)")
    for name, now, old in (("SQLite", sqlite, sqlite_old), ("PostgreSQL", pg, pg_old)):
        line = (
            f"  {name}: runner {now['runner']:.0f} B (events {now['events']:.0f}, outbox "
            f"{now['outbox']:.0f}), raw {now['raw']:.0f} B: {now['runner'] / now['raw']:.2f}x"
        )
        if isinstance(old, dict):
            line += (
                f"; before {old['runner']:.0f} B (events {old['events']:.0f}, outbox "
                f"{old['outbox']:.0f}), raw {old['raw']:.0f} B: {old['runner'] / old['raw']:.2f}x"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()

"""Retention (`statekit prune`): the dispatcher's claim before and after pruning delivered
messages, and how long a concurrent writer waits while a prune removes them.

Run: `python -m bench.retention [ROWS] [--sqlite-only]` from the repository root
(ROWS: delivered outbox messages, default 100000; PostgreSQL must be installed: a
throwaway server is started on loopback).

Per store: ROWS delivered messages over 1000 instances, delivered 30 days ago (rows
written by SQL), and 32 pending messages behind them.

- Claim: `Store.claim_outbox` of 32 messages (what `Dispatcher.dispatch_once` does
  first), the claims released between runs (untimed); median of 21, before and after
  `prune`.
- Writer: a process applying events to one instance of the counter chart on its own
  connection, one `Runner.apply` each; first alone (the single write's time in this
  run), then while `prune(batch=1000)` removes the ROWS messages.
  Reported: the writer's median and longest apply during the prune, against its median
  alone, and the prune's longest batch.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from statekit.engine.chart import Chart
from statekit.runner.retention import RetentionPolicy, prune
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.statements import ELIGIBLE, OUTBOX_COLUMNS
from statekit.testing.postgres_server import ThrowawayPostgres

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = 1000
PENDING = 32
CLAIMS = 21
ALONE_WRITES = 200


def _counter() -> Chart:
    sys.path.insert(0, str(ROOT / "tests"))
    from runner_charts import COUNTER, chart_from  # the tests' chart, one definition

    return chart_from(COUNTER, "counter.yaml")


def _numbers(store: Store) -> str:
    if store.dialect == "postgresql":
        return "SELECT g AS n FROM generate_series(1, ?) g"
    return (
        "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?) "
        "SELECT n FROM g"
    )


def _fill(store: Store, rows: int, delivered_at: float) -> None:
    """`rows` delivered messages over `INSTANCES` instances, then `PENDING` pending ones."""
    columns = (
        "instance_id, message_id, sequence, type, payload, status, attempts, created_at, "
        "delivered_at"
    )
    with store.write():
        store.execute(
            f"INSERT INTO statekit_outbox ({columns}) SELECT 'i' || (n % {INSTANCES}), "
            f"'m' || n || '/0', n / {INSTANCES} + 1, 'Counted', '{{\"total\":1}}', "
            f"'delivered', 1, ?, ? FROM ({_numbers(store)}) g",
            (delivered_at, delivered_at, rows),
        )
        store.execute(
            f"INSERT INTO statekit_outbox ({columns}) SELECT 'p' || n, 'm' || n || '/0', 1, "
            f"'Counted', '{{\"total\":1}}', 'pending', 0, ?, NULL FROM ({_numbers(store)}) g",
            (delivered_at, PENDING),
        )
    if store.dialect == "postgresql":
        store.execute("ANALYZE")


def _claim_ms(store: Store) -> tuple[list[float], list[float]]:
    """The claim's times, whole (its write transaction and COMMIT included) and its query
    alone (read in a read transaction: the part that grows with the delivered rows)."""
    whole, query = [], []
    sql = f"SELECT {OUTBOX_COLUMNS} FROM statekit_outbox o WHERE {ELIGIBLE} ORDER BY o.id LIMIT ?"
    for _ in range(CLAIMS):
        now = time.time()
        started = time.perf_counter()
        claimed = store.claim_outbox("bench", now, 60.0, PENDING)
        whole.append((time.perf_counter() - started) * 1000)
        assert len(claimed) == PENDING, len(claimed)
        with store.write():
            store.execute(
                "UPDATE statekit_outbox SET claimed_by = NULL, claimed_until = NULL "
                "WHERE status = 'pending'"
            )
        with store.read():
            started = time.perf_counter()
            found = store.execute(sql, (now, now, PENDING)).fetchall()
            query.append((time.perf_counter() - started) * 1000)
        assert len(found) == PENDING
    return whole, query


def _write_loop(url: str, stop: Any, count: Any, results: Any) -> None:
    """The writer process: applies events to instance w until `stop`, timing each apply
    as (wall-clock start, milliseconds); its own process, so that it competes with the
    prune for the database only, not for one interpreter's lock."""
    runner = Runner(_counter(), open_store(url))
    times: list[tuple[float, float]] = []
    while not stop.is_set():
        at = time.time()
        started = time.perf_counter()
        runner.apply("w", f"e{len(times)}", "Incr", {"by": 1})
        times.append((at, (time.perf_counter() - started) * 1000))
        count.value = len(times)
    results.put(times)
    runner.store.close()


def _range(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ms ({min(values):.2f}-{max(values):.2f})"


def bench(url: str, rows: int, chart: Chart) -> None:
    store = open_store(url)
    runner = Runner(chart, store)
    runner.create("w")
    _fill(store, rows, time.time() - 30 * 86_400)
    before = _claim_ms(store)
    context = multiprocessing.get_context("spawn")
    stop, count, results = context.Event(), context.Value("i", 0), context.Queue()
    writer = context.Process(target=_write_loop, args=(url, stop, count, results))
    writer.start()
    while count.value < ALONE_WRITES:
        time.sleep(0.01)  # pacing the measurement only: nothing is asserted on it
    began = time.time()
    started = time.perf_counter()
    report = prune(store, RetentionPolicy(batch=1000))
    took = time.perf_counter() - started
    ended = time.time()
    stop.set()
    times = results.get()
    writer.join()
    alone = [ms for at, ms in times if at < began]
    during = [ms for at, ms in times if began <= at <= ended]
    after = _claim_ms(store)
    assert report.outbox_messages == rows, report
    single = statistics.median(alone)
    for what, at, then in (("claim", before[0], after[0]), ("its query", before[1], after[1])):
        print(f"  {what} of {PENDING} at {rows:,} delivered rows: {_range(at)}")
        print(f"  {what} of {PENDING} after prune: {_range(then)}")
        print(f"  {what}: before/after {statistics.median(at) / statistics.median(then):.1f}x")
    print(
        f"  prune of {rows:,} rows: {took:.2f} s in {report.batches} batches, the longest "
        f"{report.longest_batch_seconds * 1000:.1f} ms"
    )
    print(f"  writer alone:        {_range(alone)} over {len(alone)} applies")
    print(f"  writer during prune: {_range(during)} over {len(during)} applies")
    print(
        f"  longest wait during prune: {max(during):.1f} ms = {max(during) / single:.1f}x a "
        f"single write's median ({single:.2f} ms)"
    )
    store.close()


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(args[0]) if args else 100_000
    chart = _counter()
    with tempfile.TemporaryDirectory() as folder:
        print("SQLite")
        bench(f"sqlite:///{folder}/retention.db", rows, chart)
    if "--sqlite-only" in sys.argv:
        return
    server = ThrowawayPostgres().start()
    try:
        print("PostgreSQL")
        bench(server.create_database("statekit_retention"), rows, chart)
    finally:
        server.stop()


if __name__ == "__main__":
    main()

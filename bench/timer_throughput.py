"""What durable timers cost the runner, as ratios measured in one run.

Run: `python -m bench.timer_throughput [EVENTS]` from the repository root (PostgreSQL
must be installed: scripts/ensure-postgres.sh; a throwaway server is started on
loopback with default durability). SQLite runs in WAL mode with synchronous=FULL.

- "plain": `Runner.apply` of a chart whose every event re-enters its state,
  assigns the context and emits a message (one transaction per event);
- "timed": the same chart with an `after: 1h` timer on that state, so every
  event also cancels one timer and arms another (one timer row deleted, one
  inserted, in the event's transaction);
- "fire_due": `Runner.fire_due` delivering EVENTS due timers of as many
  instances (each delivery assigns and emits, like a plain event; 32
  deliveries per transaction);
- "timed, 100,000 armed": the timed stream again after 100,000 other timer rows
  were put in the table (bulk-inserted rows of other instances: the indexes are
  what `apply` could pay for), and `fire_due` with them armed but not due.

Each figure is the median of RUNS (3) runs with its range; each run uses fresh
instances. The machine is shared: compare the ratios, not the absolute figures.
"""

from __future__ import annotations

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
from statekit.runner.store.rows import TimerRow
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 3
T0 = 1_700_000_000_000
PLAIN = """
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
        to: open
        do:
          - assign: {total: ctx.total + event.by}
          - emit: {type: Counted, payload: {total: ctx.total}}
"""
TIMED = PLAIN.replace("  open:\n    on:", "  open:\n    after:\n      1h: open\n    on:")
DUE = """
statechart: due
version: 1
context:
  total: {type: integer, default: 0}
events:
  Incr: {by: integer}
initial: open
states:
  open:
    after:
      1s:
        to: fired
        do:
          - assign: {total: ctx.total + 1}
          - emit: {type: Counted, payload: {total: ctx.total}}
  fired: {}
"""


def chart(text: str) -> Chart:
    result = compile_source(text, "<bench>")
    assert result.chart is not None
    return Chart(result.chart)


def applying(store: Store, text: str, events: int, tag: str) -> float:
    """Events/s of `apply` on one fresh instance of the chart `text`."""
    runner = Runner(chart(text), store, clock=lambda: T0)
    runner.create(tag)
    start = time.perf_counter()
    for n in range(events):
        assert runner.apply(tag, f"e{n}", "Incr", {"by": 1}).applied
    return events / (time.perf_counter() - start)


def firing(store: Store, events: int, tag: str) -> float:
    """Deliveries/s of `fire_due` over `events` due timers of as many instances."""
    runner = Runner(chart(DUE), store, clock=lambda: T0)
    for n in range(events):
        runner.create(f"{tag}-{n}")
    start = time.perf_counter()
    fired = 0
    while fired < events:
        fired += len(runner.fire_due(now_ms=T0 + 1_000, limit=events - fired))
    return events / (time.perf_counter() - start)


def fill(store: Store, rows: int) -> None:
    """`rows` armed timers of other instances, due in the far future."""
    with store.write():
        for k in range(0, rows, 5_000):
            store.insert_timers(
                [
                    TimerRow(
                        instance_id=f"other-{n}",
                        timer_id="after(1h)@open",
                        generation=1,
                        event="after(1h)@open",
                        payload="{}",
                        due_ms=T0 + 10**9 + n,
                        sequence=0,
                    )
                    for n in range(k, min(rows, k + 5_000))
                ]
            )


def summary(measure: Callable[[int], float]) -> tuple[float, float, float]:
    rates = [measure(run) for run in range(RUNS)]
    return statistics.median(rates), min(rates), max(rates)


def line(what: str, figures: tuple[float, float, float], base: float | None = None) -> None:
    median, low, high = figures
    ratio = f"{100 * median / base:.0f}%" if base else ""
    print(f"| {what} | {median:,.0f} | {low:,.0f} to {high:,.0f} | {ratio} |", flush=True)


def bench(url: str, name: str, events: int) -> None:
    store = open_store(url)
    plain = summary(lambda r: applying(store, PLAIN, events, f"plain-{r}"))
    line(f"{name}: plain apply", plain, plain[0])
    timed = summary(lambda r: applying(store, TIMED, events, f"timed-{r}"))
    line(f"{name}: timed apply (a timer cancelled and armed per event)", timed, plain[0])
    fired = summary(lambda r: firing(store, events, f"due-{r}"))
    line(f"{name}: fire_due deliveries", fired, plain[0])
    fill(store, 100_000)
    crowded = summary(lambda r: applying(store, TIMED, events, f"crowded-{r}"))
    line(f"{name}: timed apply, 100,000 armed", crowded, timed[0])
    crowded_fire = summary(lambda r: firing(store, events, f"crowded-due-{r}"))
    line(f"{name}: fire_due, 100,000 armed (not due)", crowded_fire, fired[0])
    store.close()


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print("| what | events/s (median) | range | ratio |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        bench(f"sqlite:///{Path(folder) / 'bench.db'}", "SQLite", events)
    with ThrowawayPostgres() as server:
        bench(server.create_database("bench"), "PostgreSQL", events)


if __name__ == "__main__":
    main()

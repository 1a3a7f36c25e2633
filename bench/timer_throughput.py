"""What durable timers cost the runner, as ratios measured in one run.

Run: `python -m bench.timer_throughput [EVENTS] [--sqlite-only]` from the repository
root (PostgreSQL must be installed: scripts/ensure-postgres.sh; a throwaway server is
started on loopback with default durability). SQLite runs in WAL mode with
synchronous=FULL, then with synchronous=OFF (5 times EVENTS), where no fsync hides
what the runner itself costs.

- "plain": `Runner.apply` of a chart whose every event re-enters its state,
  assigns the context and emits a message (one transaction per event);
- "timed": the same chart with an `after: 1h` timer on that state, so every
  event also cancels one timer and arms it again under the same ID (its row
  replaced in place by one upsert, and the instance row's timers text
  rewritten, in the event's transaction);
- "fire_due": `Runner.fire_due` delivering EVENTS due timers of as many
  instances (each delivery assigns and emits, like a plain event), 32
  deliveries per transaction (its default) and one per transaction (the
  general case, one commit per delivery as `apply` has);
- "timed, 100,000 armed": the timed stream again after 100,000 other timer rows
  were put in the table (bulk-inserted rows of other instances: the indexes are
  what `apply` could pay for), and `fire_due` with them armed but not due.

Each figure is the median of RUNS (5) runs with its range, the runs of the figures
compared with each other interleaved; each run uses fresh instances. The machine is
shared: compare the ratios, not the absolute figures.

`--before REV` adds the plain and timed streams of the `statekit` of git revision REV
(exported to a temporary folder and run in a subprocess, timed as the runner here is,
in a store of its own, since its schema may be older), interleaved with the others.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.runner_throughput import export, run_before
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.rows import TimerRow
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 5
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


BEFORE: Path | None = None  # the exported `statekit` of `--before REV`, when given


def before_applying(url: str, name: str, events: int, tag: str) -> float:
    """`applying(open_store(url), <name>, events, tag)` run by the code of `BEFORE` in a
    subprocess (`name`: PLAIN or TIMED)."""
    assert BEFORE is not None
    return run_before(
        BEFORE,
        "import json, bench.timer_throughput as b, statekit.runner.store as s; "
        f"print(json.dumps(b.applying(s.open_store({url!r}), b.{name}, {events}, {tag!r})))",
    )


def firing(store: Store, events: int, tag: str, per_call: int = 1_000_000) -> float:
    """Deliveries/s of `fire_due` over `events` due timers of as many instances, at most
    `per_call` deliveries per call (1: one transaction per delivery, as `apply`)."""
    runner = Runner(chart(DUE), store, clock=lambda: T0)
    for n in range(events):
        runner.create(f"{tag}-{n}")
    start = time.perf_counter()
    fired = 0
    while fired < events:
        fired += len(runner.fire_due(now_ms=T0 + 1_000, limit=min(per_call, events - fired)))
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


def line(what: str, figures: tuple[float, float, float], base: float | None = None) -> None:
    median, low, high = figures
    ratio = f"{100 * median / base:.0f}%" if base else ""
    print(f"| {what} | {median:,.0f} | {low:,.0f} to {high:,.0f} | {ratio} |", flush=True)


def interleaved(*measures: Callable[[int], float]) -> list[tuple[float, float, float]]:
    """Each measure RUNS times, the runs of all of them interleaved (so that the load of
    the shared machine falls on all alike); (median, min, max) of each."""
    rates: list[list[float]] = [[] for _ in measures]
    for run in range(RUNS):
        for rate, measure in zip(rates, measures, strict=True):
            rate.append(measure(run))
    return [(statistics.median(r), min(r), max(r)) for r in rates]


def bench(url: str, name: str, events: int, before_url: str | None = None) -> None:
    """The figures of one store; `before_url`: the store of `--before REV`'s streams."""
    store = open_store(url)
    measures = [
        lambda r: applying(store, PLAIN, events, f"plain-{r}"),
        lambda r: applying(store, TIMED, events, f"timed-{r}"),
        lambda r: firing(store, events, f"due-{r}"),
        lambda r: firing(store, events, f"single-{r}", 1),
    ]
    if before_url is not None:
        measures += [
            lambda r: before_applying(before_url, "PLAIN", events, f"plain-{r}"),
            lambda r: before_applying(before_url, "TIMED", events, f"timed-{r}"),
        ]
    plain, timed, fired, single, *before = interleaved(*measures)
    line(f"{name}: plain apply", plain, plain[0])
    line(f"{name}: timed apply (a timer cancelled and armed per event)", timed, plain[0])
    if before:
        rev = sys.argv[sys.argv.index("--before") + 1]
        line(f"{name}: plain apply of {rev}", before[0], before[0][0])
        line(f"{name}: timed apply of {rev}", before[1], before[0][0])
    line(f"{name}: fire_due deliveries (32 per transaction)", fired, plain[0])
    line(f"{name}: fire_due deliveries, one per transaction", single, plain[0])
    fill(store, 100_000)
    crowded, crowded_fire = interleaved(
        lambda r: applying(store, TIMED, events, f"crowded-{r}"),
        lambda r: firing(store, events, f"crowded-due-{r}"),
    )
    line(f"{name}: timed apply, 100,000 armed", crowded, timed[0])
    line(f"{name}: fire_due, 100,000 armed (not due)", crowded_fire, fired[0])
    store.close()


def main() -> None:
    global BEFORE
    events = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1000
    rev = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
    print("| what | events/s (median) | range | ratio |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        BEFORE = export(rev, Path(folder) / "before") if rev else None
        for what, sync, n in (("SQLite", "", events), ("SQLite, synchronous=OFF (CPU only)",
                              "?synchronous=OFF", events * 5)):  # fmt: skip
            urls = [f"sqlite:///{Path(folder) / f'{k}{len(sync)}.db'}{sync}" for k in "ab"]
            bench(urls[0], what, n, urls[1] if rev else None)
        if "--sqlite-only" in sys.argv:
            return
        with ThrowawayPostgres() as server:
            before_url = server.create_database("before") if rev else None
            bench(server.create_database("bench"), "PostgreSQL", events, before_url)


if __name__ == "__main__":
    main()

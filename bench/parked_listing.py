"""`statekit timers`' listing of parked timers (`loop_parking.parked_timers`) against the
length of the instances' histories, next to the listing of the armed timers it follows.

Run: `python -m bench.parked_listing [INSTANCES] [--postgres]` from the repository root
(INSTANCES: default 500; `--postgres` also on a throwaway PostgreSQL server on loopback).

For each history length (2, 40 and 200 entries per instance) a store holding INSTANCES
instances, half of them with a loop the runner parked (`Runner.park_timer`) as their last
entry, half with a timer armed a day ahead, every history made of the same events but
as long as asked (ticks before the last two entries). Timed in-process, in one read
transaction each: `store.timers()` (what `statekit timers` read before) and
`parked_timers(store)` (what it reads now besides), median of 7 with the range, and the
ratio of the two medians. The parked listing reads each instance's row and its last
entry by primary key, so the histories' length should only add what a deeper index
costs a lookup.
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
from statekit.runner.decision_inputs import Command
from statekit.runner.loop_parking import parked_timers
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.testing.postgres_server import ThrowawayPostgres

CHART = """
statechart: parked_listing
events: {Tick: {}, Go: {}, Wait: {}}
initial: idle
states:
  idle:
    on: {Tick: idle, Go: spinning, Wait: waiting}
  spinning:
    after: {0ms: spinning}
  waiting:
    after: {1d: idle}
"""
LENGTHS = (2, 40, 200)
ROUNDS = 7


def _chart() -> Chart:
    compiled = compile_source(CHART.lstrip("\n"), "parked_listing.yaml").chart
    assert compiled is not None
    return Chart(compiled)


def _fill(url: str, instances: int, length: int) -> Store:
    runner = Runner(_chart(), open_store(url), clock=lambda: 1_000)
    for n in range(instances):
        runner.create(f"i{n}")
    last = ["Go" if n % 2 else "Wait" for n in range(instances)]
    for k in range(length - 1):
        runner.apply_many(
            (f"i{n}", Command(f"e{k}", "Tick" if k < length - 2 else last[n]))
            for n in range(instances)
        )
    for n in range(1, instances, 2):
        (armed,) = runner.load(f"i{n}").state.timers
        runner.park_timer(f"i{n}", armed.id, armed.generation)
    return runner.store


def _median(store: Store, read: Callable[[Store], object]) -> tuple[float, float, float]:
    times = []
    for _ in range(ROUNDS):
        began = time.process_time()
        with store.read():
            read(store)
        times.append(time.process_time() - began)
    return statistics.median(times), min(times), max(times)


def _measure(label: str, url_of: Callable[[int], str], instances: int) -> None:
    for length in LENGTHS:
        store = _fill(url_of(length), instances, length)
        armed = _median(store, lambda s: s.timers())
        parked = _median(store, parked_timers)
        with store.read():
            counts = len(store.timers()), len(parked_timers(store))
        store.close()
        print(
            f"{label}  {instances} instances x {length} entries ({counts[0]} armed, "
            f"{counts[1]} parked): timers() {armed[0] * 1e3:.1f} ms "
            f"[{armed[1] * 1e3:.1f}-{armed[2] * 1e3:.1f}], parked_timers "
            f"{parked[0] * 1e3:.1f} ms [{parked[1] * 1e3:.1f}-{parked[2] * 1e3:.1f}], "
            f"ratio {parked[0] / armed[0]:.2f}"
        )


def main(argv: list[str]) -> None:
    sizes = [a for a in argv if not a.startswith("--")]
    instances = int(sizes[0]) if sizes else 500
    with tempfile.TemporaryDirectory() as folder:
        _measure("sqlite", lambda n: f"sqlite:///{Path(folder) / f'{n}.db'}", instances)
        if "--postgres" in argv:
            with ThrowawayPostgres() as server:
                _measure("postgresql", lambda n: server.create_database(f"b{n}"), instances)


if __name__ == "__main__":
    main(sys.argv[1:])

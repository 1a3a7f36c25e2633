"""What an event costs the runner with 0, 10, 100 and 1,000 timers armed on its instance.

Run: `python -m bench.armed_timers [CYCLES] [--sqlite-only] [--before REV]` from the
repository root (PostgreSQL: scripts/ensure-postgres.sh; a throwaway server is started
on loopback). One instance per armed count is created and given that many timers (an
event that arms one more each time, due in an hour; 999 for the largest count, so that
with `one` armed it holds 1,000, the bound `MAX_ARMED_TIMERS`); then CYCLES (default 100) times
three events, each timed alone: `ArmOne` arms the timer `one`, `CancelOne` cancels it,
`Plain` is accepted and touches no timer. Each figure is the median of the events of
one kind in a round (the armed counts taken in turn, so the machine's load hits them
alike), then the median of ROUNDS rounds with their range; the ratio, cost at 1,000
armed over cost at 0, is taken per round. Times are the client process's CPU time per
event (`time.process_time`: the runner's own work, which is what grows with the armed
timers; the statements' server time on PostgreSQL is not in it) and its wall time.
SQLite runs with `synchronous=OFF`, so that no fsync hides the runner's cost.

`--before REV` runs the same in a subprocess on the `statekit` of git revision REV
(`runner_throughput.export`), in a store of its own (its schema may be older).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.runner_throughput import ROOT, export, run_in
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres

ARMED = (0, 10, 100, 1_000)
FILLED = {0: 0, 10: 10, 100: 100, 1_000: 999}  # the timers put there besides `one`
KINDS = ("ArmOne", "CancelOne", "Plain")
ROUNDS = 5
T0 = 1_700_000_000_000
CHART = """
statechart: armed
version: 1
events:
  Fill: {}
  ArmOne: {}
  CancelOne: {}
  Plain: {}
  Ping: {}
initial: open
states:
  open:
    on:
      Fill: {do: [{send: {event: Ping, delay: 1h}}]}
      ArmOne: {do: [{send: {event: Ping, delay: 2h, id: one}}]}
      CancelOne: {do: [{cancel: one}]}
      Plain: {}
"""
Costs = dict[str, list[float]]  # "<kind> cpu" / "<kind> wall" → ms per event


def filled(url: str, tag: str, armed: int) -> Runner:
    """A runner with the instance `tag` holding `armed` timers."""
    result = compile_source(CHART, "armed.yaml")
    assert result.chart is not None
    runner = Runner(Chart(result.chart), open_store(url), clock=lambda: T0)
    runner.create(tag)
    for n in range(FILLED[armed]):
        assert runner.apply(tag, f"fill{n}", "Fill").applied
    return runner


def cycles(runner: Runner, tag: str, count: int, start: int) -> dict[str, float]:
    """Median CPU and wall milliseconds per event of each kind over `count` cycles."""
    costs: Costs = {f"{k} {w}": [] for k in KINDS for w in ("cpu", "wall")}
    for n in range(start, start + count):
        for kind in KINDS:
            cpu, wall = time.process_time(), time.perf_counter()
            assert runner.apply(tag, f"{kind}{n}", kind).applied
            costs[f"{kind} wall"].append(1e3 * (time.perf_counter() - wall))
            costs[f"{kind} cpu"].append(1e3 * (time.process_time() - cpu))
    return {name: statistics.median(values) for name, values in costs.items()}


def child(url: str, tag: str, armed: int, count: int, rounds: int) -> list[dict[str, float]]:
    """`rounds` rounds of `cycles` on one filled instance (run in the `--before` tree)."""
    runner = filled(url, tag, armed)
    cycles(runner, tag, 5, 0)  # warm: the row cache, the statements' texts
    return [cycles(runner, tag, count, 5 + r * count) for r in range(rounds)]


def measure(url: str, tree: Path | None, count: int) -> dict[int, list[dict[str, float]]]:
    """Per armed count, ROUNDS rounds' medians (`tree`: run on that `statekit` in a
    subprocess, else here), the counts interleaved round by round."""
    label = "before" if tree else "this"
    if tree is not None:  # one subprocess per armed count: its instance filled once
        return {
            armed: run_in(
                tree,
                "import json, bench.armed_timers as b; print(json.dumps(b.child("
                f"{url!r}, {f'{label}-{armed}'!r}, {armed}, {count}, {ROUNDS})))",
            )
            for armed in ARMED
        }
    runners = {armed: filled(url, f"{label}-{armed}", armed) for armed in ARMED}
    for armed, runner in runners.items():
        cycles(runner, f"{label}-{armed}", 5, 0)
    out: dict[int, list[dict[str, float]]] = {armed: [] for armed in ARMED}
    for r in range(ROUNDS):
        for armed, runner in runners.items():
            out[armed].append(cycles(runner, f"{label}-{armed}", count, 5 + r * count))
    return out


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}\u2013{max(values):.3f})"


def report(name: str, rounds: dict[int, list[dict[str, float]]]) -> None:
    """One table: ms per event by armed count, and the ratio 1,000 ÷ 0 per round."""
    print(f"\n{name}: ms per event, median of {ROUNDS} rounds (range)\n")
    print("| event | measure | " + " | ".join(f"{a:,} armed" for a in ARMED) + " | 1,000 ÷ 0 |")
    print("|---|---|" + "---|" * (len(ARMED) + 1))
    for kind in KINDS:
        for way in ("cpu", "wall"):
            key = f"{kind} {way}"
            cells = [_cell([r[key] for r in rounds[a]]) for a in ARMED]
            ratios = [hi[key] / lo[key] for hi, lo in zip(rounds[1_000], rounds[0], strict=True)]
            ratio = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}\u2013{max(ratios):.2f})"
            print(f"| {kind} | {way} | " + " | ".join(cells) + f" | {ratio} |", flush=True)


def bench(url: str, name: str, count: int, before: Path | None, before_url: str | None) -> None:
    report(f"{name}, this tree", measure(url, None, count))
    if before is not None and before_url is not None:
        report(f"{name}, before", measure(before_url, before, count))


def main() -> None:
    args = sys.argv[1:]
    rev = args[args.index("--before") + 1] if "--before" in args else None
    numbers = [a for a in args if a.isdigit()]
    count = int(numbers[0]) if numbers else 100
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        before = export(rev, folder / "before") if rev else None
        print(f"cycles per round {count}; before: {rev or '-'}; {json.dumps(list(ARMED))} armed")
        bench(
            f"sqlite:///{folder}/this.db?synchronous=OFF",
            "SQLite (synchronous=OFF)",
            count,
            before,
            f"sqlite:///{folder}/before.db?synchronous=OFF",
        )
        if "--sqlite-only" not in args:
            with ThrowawayPostgres() as server:
                before_url = server.create_database("before") if rev else None
                bench(server.create_database("bench"), "PostgreSQL", count, before, before_url)


if __name__ == "__main__":
    assert ROOT.is_dir()
    main()

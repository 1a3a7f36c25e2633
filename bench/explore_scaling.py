"""Exploration speed: a generated parallel chart of 3 regions x N states (N³ configurations).

Run: `python -m bench.explore_scaling`. For N = 10, 20, 40 (1,000 / 8,000 / 64,000
reachable configurations) it prints the median exploration time, configurations/s
and (configuration, event) checks/s, then the time of every chart lint rule on the
40-state chart (one shared exploration, included). Each region cycles through its
states with NEXT_r and PREV_r; every tenth state also has a JUMP_r guarded by
payload data (so those checks take the branching path: two outcomes, with their
assumptions), and `reject "*"` on each region classifies the rest. Linear cost
shows as flat µs per check across sizes. Finally it times `statekit lint
machines/` as a whole process (bench/lint_machines.py).

The rules' row builds the product (`compose_above=sys.maxsize`); the row after it
explores the three independent regions apart, as `statekit lint` does
(`statekit.analysis.compositional`).

`python -m bench.explore_scaling memory [RUNS]` measures memory instead: for
3 x 10, 3 x 20 and 3 x 47 (103,823 configurations, of which the default bound
keeps 100,000) the peak and the retained memory of the exploration as tracemalloc
sees it, per stored abstract state; then, as fresh processes taking turns (RUNS
rounds, 3 by default), the exploration of 3 x 47 at the default bound and
`statekit lint` of that chart: wall and CPU time and peak resident memory (of the process itself:
`bench._fresh_process`), median and range; `statekit lint` explores the three
independent regions apart.
"""

from __future__ import annotations

import functools
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from bench._fresh_process import run_fresh
from bench.lint_machines import median_process_ms
from statekit.analysis.explorer import explore
from statekit.analysis.facts import chart_facts
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.lint.registry import RULES

REGIONS = 3
ROOT = Path(__file__).resolve().parent.parent
BOUND_STATES = 47
"""3 x 47 = 103,823 configurations: past the default bound of 100,000."""


def regions_chart_yaml(regions: int, states: int) -> str:
    """A parallel root of `regions` cycles of `states` states (states**regions configurations)."""
    lines = ["statechart: regions", "version: 1", "events:"]
    for r in range(regions):
        lines += [f"  NEXT_{r}: {{}}", f"  PREV_{r}: {{}}", f"  JUMP_{r}: {{home: boolean}}"]
    lines += ["parallel: true", "states:"]
    for r in range(regions):
        lines += [f"  r{r}:", f"    initial: s{r}_0", "    reject: {'*': NOT_HERE}", "    states:"]
        for i in range(states):
            nxt, prev = (i + 1) % states, (i - 1) % states
            on = f"NEXT_{r}: s{r}_{nxt}, PREV_{r}: s{r}_{prev}"
            if i % 10 == 0:
                on += f", JUMP_{r}: {{to: s{r}_0, if: event.home, else: STAY}}"
            lines.append(f"      s{r}_{i}: {{on: {{{on}}}}}")
    return "\n".join(lines) + "\n"


def chart(states: int) -> CompiledChart:
    """The compiled 3-region chart with `states` states per region."""
    result = compile_source(regions_chart_yaml(REGIONS, states), "regions.yaml")
    assert result.chart is not None, result.diagnostics[:3]
    return result.chart


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    """Median wall time of `run()`, with the cyclic GC paused as in a lint process."""
    times = []
    for _ in range(repeats):
        gc.collect()
        with collector_paused():
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def traced_exploration(states: int) -> tuple[int, float, float, float]:
    """(abstract states stored, seconds under tracemalloc, peak bytes per abstract state,
    retained bytes per abstract state) of exploring the 3 x `states` chart."""
    compiled = chart(states)
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    explored = explore(compiled)
    seconds = time.perf_counter() - start
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    count = len(explored.nodes)
    return count, seconds, peak / count, current / count


def process(args: list[str]) -> tuple[float, float, int, int]:
    """(wall s, CPU s, peak RSS bytes, exit code) of one fresh process: its own peak,
    not this process's (`bench._fresh_process`)."""
    return run_fresh(args, ROOT)


def _spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    scaled = [v * scale for v in values]
    median = statistics.median(scaled)
    return f"{median:,.1f} {unit} ({min(scaled):,.1f}-{max(scaled):,.1f})"


def memory_main(runs: int) -> None:
    """Print the memory figures (see the module docstring)."""
    print(f"{'chart':>8} {'stored':>8} {'traced s':>9} {'peak B/state':>13} {'kept B/state':>13}")
    for states in (10, 20, BOUND_STATES):
        count, seconds, peak, kept = traced_exploration(states)
        print(f"{REGIONS}x{states:<6} {count:>8,} {seconds:>9.1f} {peak:>13,.0f} {kept:>13,.0f}")
    explore_code = (
        "from bench.explore_scaling import chart; "
        "from statekit.analysis.explorer import explore; "
        f"explore(chart({BOUND_STATES}))"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "regions.yaml"
        path.write_text(regions_chart_yaml(REGIONS, BOUND_STATES), encoding="utf-8")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            f"explore 3x{BOUND_STATES}": [sys.executable, "-c", explore_code],
            f"statekit lint 3x{BOUND_STATES}": [
                sys.executable,
                "-m",
                "statekit.cli",
                "lint",
                str(path),
            ],
        }
        found: dict[str, list[tuple[float, float, int, int]]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, args in commands.items():
                found[name].append(process(args))
    print(f"{runs} interleaved runs; median (min-max)")
    for name, rows in found.items():
        walls = [r[0] for r in rows]
        cpus = [r[1] for r in rows]
        peaks = [float(r[2]) for r in rows]
        codes = sorted({r[3] for r in rows})
        print(
            f"{name:>22}: wall {_spread(walls, 's')}, CPU {_spread(cpus, 's')},"
            f" peak RSS {_spread(peaks, 'MB', 1e-6)}, exit {codes}"
        )


def main() -> None:
    """Print the scaling table, the rules' time and the lint process time."""
    if len(sys.argv) > 1 and sys.argv[1] == "memory":
        memory_main(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
        return
    print(
        f"{'states':>10} {'configs':>8} {'checks':>8} {'median ms':>10}"
        f" {'configs/s':>10} {'checks/s':>10} {'µs/check':>9}"
    )
    for states in (10, 20, 40):
        compiled = chart(states)
        explored = explore(compiled)
        assert explored.complete and len(explored.nodes) == states**REGIONS
        seconds = median_seconds(functools.partial(explore, compiled), 5 if states < 40 else 3)
        configs, checks = len(explored.nodes), explored.checks
        print(
            f"{REGIONS}x{states:<8} {configs:>8,} {checks:>8,} {seconds * 1000:>10.0f}"
            f" {configs / seconds:>10,.0f} {checks / seconds:>10,.0f}"
            f" {seconds / checks * 1e6:>9.2f}"
        )
    compiled = chart(40)

    def lint_rules() -> None:
        facts = chart_facts(compiled, ExplorationOptions(compose_above=sys.maxsize))
        for rule in RULES.values():
            if rule.check is not None:
                list(rule.check(compiled, facts))

    seconds = median_seconds(lint_rules, 3)
    print(f"every chart rule on 3x40, sharing one exploration: {seconds * 1000:.0f} ms")

    def lint_rules_apart() -> None:
        facts = chart_facts(compiled, ExplorationOptions())
        for rule in RULES.values():
            if rule.check is not None:
                list(rule.check(compiled, facts))

    apart = median_seconds(lint_rules_apart, 3)
    print(
        f"the same, its three independent regions explored apart (the default): "
        f"{apart * 1000:.0f} ms ({seconds / apart:.0f}x less)"
    )
    lint = median_process_ms([sys.executable, "-m", "statekit.cli", "lint", "machines/"], runs=9)
    print(f"statekit lint machines/ (whole process): {lint:.0f} ms")


if __name__ == "__main__":
    main()

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
"""

from __future__ import annotations

import functools
import gc
import statistics
import sys
import time
from collections.abc import Callable

from bench.lint_machines import median_process_ms
from statekit.analysis.explorer import explore
from statekit.analysis.facts import chart_facts
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.lint.registry import RULES

REGIONS = 3


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


def main() -> None:
    """Print the scaling table, the rules' time and the lint process time."""
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
        facts = chart_facts(compiled, ExplorationOptions())
        for rule in RULES.values():
            if rule.check is not None:
                list(rule.check(compiled, facts))

    seconds = median_seconds(lint_rules, 3)
    print(f"every chart rule on 3x40, sharing one exploration: {seconds * 1000:.0f} ms")
    lint = median_process_ms([sys.executable, "-m", "statekit.cli", "lint", "machines/"], runs=9)
    print(f"statekit lint machines/ (whole process): {lint:.0f} ms")


if __name__ == "__main__":
    main()

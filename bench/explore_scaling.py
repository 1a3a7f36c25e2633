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

`python -m bench.explore_scaling memory [RUNS]` measures memory instead, every case in
a fresh process that reports its own peak resident set (VmHWM), the cases taking turns
for RUNS rounds (3 by default): an interpreter that imports statekit (the baseline),
the exploration of 3 x 10, 3 x 20 and 3 x 47 (103,823 configurations, of which the
default bound keeps 100,000) with its growth over the baseline per stored abstract
state, the same under tracemalloc (peak and retained bytes per state), and
`statekit lint` of the 3 x 47 chart. It records its rows as the `memory` table.
"""

from __future__ import annotations

import functools
import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import Row, Spread, record
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


PEAK_PROBE = """
import atexit, runpy, sys

def _peak():
    with open("/proc/self/status") as status:
        kib = [line.split()[1] for line in status if line.startswith("VmHWM:")]
    with open({out!r}, "w") as out:
        out.write(kib[0] if kib else "0")

atexit.register(_peak)
sys.argv = {argv!r}
{body}
"""
"""Run in a fresh interpreter, it writes the process's own peak resident set (VmHWM)
when it exits. A parent's `ru_maxrss` of a child counts what the child inherited
by fork before exec (about the parent's peak), so the child reads its own."""


@dataclass(frozen=True)
class ProcessRun:
    """What one fresh process of the memory mode took: wall and CPU seconds, its own
    peak resident set, its exit code and what it printed."""

    wall_s: float
    cpu_s: float
    peak_bytes: int
    code: int
    printed: str


def fresh_process(body: str, argv: list[str]) -> ProcessRun:
    """Run `body` (Python source) as `python -c` with `argv` as its sys.argv."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "peak"
        source = PEAK_PROBE.format(out=str(out), argv=argv, body=body)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", source],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        printed, _ = child.communicate()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak = int(out.read_text() or 0) * 1024 if out.exists() else 0
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return ProcessRun(wall, cpu, peak, child.returncode, printed)


def module_body(module: str) -> str:
    """Source that runs `module` as `python -m module` does."""
    return f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"


def memory_cases(chart_path: Path) -> dict[str, tuple[str, list[str]]]:
    """Each case of the memory mode: name -> (source, argv), the baseline first."""
    explore_code = (
        "from bench.explore_scaling import chart; "
        "from statekit.analysis.explorer import explore; "
        "print(len(explore(chart({states})).nodes))"
    )
    traced_code = (
        "from bench.explore_scaling import traced_exploration; print(*traced_exploration({states}))"
    )
    cases = {
        "python -c pass": ("pass", ["-c"]),
        BASELINE: ("import statekit", ["-c"]),
    }
    for states in (10, 20, BOUND_STATES):
        cases[f"explore 3x{states}"] = (explore_code.format(states=states), ["-c"])
        cases[f"traced 3x{states}"] = (traced_code.format(states=states), ["-c"])
    argv = ["statekit", "lint", str(chart_path)]
    cases[f"statekit lint 3x{BOUND_STATES}"] = (module_body("statekit.cli"), argv)
    return cases


BASELINE = "python -c 'import statekit'"


def memory_main(runs: int) -> None:
    """Measure every case in fresh processes taking turns (RUNS rounds); print and record
    the rows (see the module docstring)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "regions.yaml"
        path.write_text(regions_chart_yaml(REGIONS, BOUND_STATES), encoding="utf-8")
        cases = memory_cases(path)
        found: dict[str, list[ProcessRun]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, (body, argv) in cases.items():
                found[name].append(fresh_process(body, argv))
    rows = memory_rows(found)
    print(f"{runs} interleaved runs, each case a fresh process; median (range)")
    for row in rows:
        print(f"  {row.what}: {row.statekit}; {row.limit}; {row.ratio}")
    record("explore_scaling", rows)


def peak_mb(runs: list[ProcessRun]) -> Spread:
    """The peak resident sets of `runs`, in MB."""
    return Spread.of([run.peak_bytes / 1e6 for run in runs])


def cpu_s(runs: list[ProcessRun]) -> Spread:
    """The CPU seconds of `runs`."""
    return Spread.of([run.cpu_s for run in runs])


def memory_rows(found: dict[str, list[ProcessRun]]) -> list[Row]:
    """The memory mode's rows: each case's own peak against the baseline's (an interpreter
    that imports statekit), and the growth over it per stored abstract state."""
    baseline = found[BASELINE]
    limit = f"{BASELINE}: peak {peak_mb(baseline).text('MB')}"
    reference = f"peak {peak_mb(found['python -c pass']).text('MB')}"
    rows = [Row(what="python -c pass, for reference", statekit=reference, table="memory")]
    for states in (10, 20, BOUND_STATES):
        runs = found[f"explore 3x{states}"]
        stored = int(runs[0].printed.split()[0])
        growth = [
            run.peak_bytes - base.peak_bytes for run, base in zip(runs, baseline, strict=True)
        ]
        per_state = Spread.of([extra / stored for extra in growth])
        traced = [r.printed.split() for r in found[f"traced 3x{states}"]]
        traced_peak = Spread.of([float(fields[2]) for fields in traced])
        traced_kept = Spread.of([float(fields[3]) for fields in traced])
        bounded = states == BOUND_STATES
        rows.append(
            Row(
                what=f"exploration of 3 x {states} ({stored:,} stored states), a fresh process",
                statekit=f"peak {peak_mb(runs).text('MB')}; CPU {cpu_s(runs).text('s')}",
                limit=limit,
                ratio=f"{per_state.text('B', digits=0)} per stored state over the baseline"
                f" (tracemalloc: peak {traced_peak.text('B', digits=0)}, retained"
                f" {traced_kept.text('B', digits=0)})",
                aim="at most 1 KB per stored state" if bounded else "",
                met=per_state.median <= 1024 if bounded else None,
                headline=bounded,
                table="memory",
            )
        )
    lint = found[f"statekit lint 3x{BOUND_STATES}"]
    codes = ", ".join(str(code) for code in sorted({run.code for run in lint}))
    wall = Spread.of([run.wall_s for run in lint])
    rows.append(
        Row(
            what=f"statekit lint of the 3 x {BOUND_STATES} chart (exit {codes}), a fresh process",
            statekit=f"peak {peak_mb(lint).text('MB')}; CPU {cpu_s(lint).text('s')};"
            f" wall {wall.text('s')}",
            limit=limit,
            table="memory",
        )
    )
    return rows


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

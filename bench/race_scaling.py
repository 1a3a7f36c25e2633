"""Race search speed: `statekit races` on the reference machines and on a 6-region chart.

Run: `python -m bench.race_scaling`. For each reference machine it prints the
exploration time, the race search time (`races_of` over that exploration), the
pairs examined and the races found. Then a generated chart with a parallel root
of 6 regions x 3 states (729 reachable configurations) and k = 1..4 events per
region (6 to 24 events, 15 to 276 pairs): each region cycles with NEXT_r and has
k - 1 events SET_r_j that jump to state j. Events of one region race (the last
one wins), events of different regions commute, and no producer is declared, so
every pair is examined in every configuration: the search costs about
configurations x pairs, which shows as flat µs per (configuration, pair).
Finally it times `statekit races machines/task.yaml` as a whole process.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from bench.explore_scaling import median_seconds
from bench.lint_machines import median_process_ms
from statekit.analysis.explorer import explore
from statekit.analysis.race_decisions import RaceDecisions
from statekit.analysis.races import races_of
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file, compile_source

ROOT = Path(__file__).resolve().parents[1]
REGIONS = 6
STATES = 3


def regions_chart_yaml(events_per_region: int) -> str:
    """6 regions of a 3-state cycle (NEXT_r) and k - 1 jumps SET_r_j to state j."""
    lines = ["statechart: six_regions", "version: 1", "events:"]
    for r in range(REGIONS):
        lines.append(f"  NEXT_{r}: {{}}")
        lines += [f"  SET_{r}_{j}: {{}}" for j in range(events_per_region - 1)]
    lines += ["parallel: true", "states:"]
    for r in range(REGIONS):
        lines += [f"  r{r}:", f"    initial: s{r}_0", "    states:"]
        for i in range(STATES):
            on = [f"NEXT_{r}: s{r}_{(i + 1) % STATES}"]
            on += [f"SET_{r}_{j}: s{r}_{j % STATES}" for j in range(events_per_region - 1)]
            lines.append(f"      s{r}_{i}: {{on: {{{', '.join(on)}}}}}")
    return "\n".join(lines) + "\n"


def pairs(chart: CompiledChart) -> int:
    """The pairs of declared events that may race (not of one ordered producer)."""
    return len(RaceDecisions(chart).pairs(tuple(chart.events), ()))


def row(name: str, chart: CompiledChart, repeats: int) -> None:
    explored = explore(chart)
    explore_s = median_seconds(functools.partial(explore, chart), repeats)
    search_s = median_seconds(functools.partial(races_of, explored), repeats)
    report = races_of(explored)
    configs, n_pairs = len(explored.nodes), pairs(chart)
    per = search_s / max(configs * n_pairs, 1) * 1e6
    print(
        f"{name:<22} {len(chart.events):>6} {n_pairs:>6} {configs:>8,} {len(report.races):>7,}"
        f" {explore_s * 1000:>10.1f} {search_s * 1000:>10.1f} {per:>8.2f}"
    )


def main() -> None:
    """Print the machines' and the 6-region chart's race search times."""
    print(
        f"{'chart':<22} {'events':>6} {'pairs':>6} {'configs':>8} {'races':>7}"
        f" {'explore ms':>10} {'search ms':>10} {'µs/c.p':>8}"
    )
    for path in sorted((ROOT / "machines").glob("*.yaml")):
        compiled = compile_file(str(path)).chart
        assert compiled is not None
        row(path.name, compiled, 5)
    for k in (1, 2, 3, 4):
        result = compile_source(regions_chart_yaml(k), "six_regions.yaml")
        assert result.chart is not None, result.diagnostics[:3]
        row(f"6 regions x {k} events", result.chart, 3)
    command = [sys.executable, "-m", "statekit.cli", "races", "machines/task.yaml"]
    process_ms = median_process_ms(command, runs=9)
    print(f"statekit races machines/task.yaml (whole process): {process_ms:.0f} ms")


if __name__ == "__main__":
    main()

"""What `after` timers cost the exploration: the 3-region chart of `explore_scaling` with and
without a timer on every state of its first region.

Run: `python -m bench.explore_timers [STATES] [RUNS]` (default 10 states per region:
1,000 configurations; 21 runs). The two charts are explored alternately; it prints the
median CPU time of each with its range, the (configuration, event) checks (the timed
chart has one more per configuration: its armed timer event) and the ratio of the
medians. CPU time, not wall time: the machine is shared.
"""

from __future__ import annotations

import gc
import re
import statistics
import sys
import time

from bench.explore_scaling import REGIONS, regions_chart_yaml
from statekit.analysis.explorer import explore
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source


def timed_yaml(states: int) -> str:
    """The chart with `after: {30s: {to: s0_0}}` on every state of region r0."""
    text = regions_chart_yaml(REGIONS, states)
    return re.sub(
        r"^(      s0_\d+: \{)(on: .*)\}$", r"\1after: {30s: {to: s0_0}}, \2}", text, flags=re.M
    )


def _compiled(text: str) -> CompiledChart:
    result = compile_source(text, "regions.yaml")
    assert result.chart is not None, result.diagnostics[:3]
    return result.chart


def main() -> None:
    """Print both medians, their ranges and the ratio."""
    states = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    charts = {
        "without timers": _compiled(regions_chart_yaml(REGIONS, states)),
        "with timers": _compiled(timed_yaml(states)),
    }
    times: dict[str, list[float]] = {name: [] for name in charts}
    checks: dict[str, int] = {}
    for _ in range(runs):
        for name, chart in charts.items():
            gc.collect()
            with collector_paused():
                start = time.process_time()
                explored = explore(chart)
                times[name].append(time.process_time() - start)
            checks[name] = explored.checks
    for name, found in times.items():
        print(
            f"{name:>15}: median {statistics.median(found) * 1000:7.1f} ms CPU "
            f"(range {min(found) * 1000:.1f}-{max(found) * 1000:.1f}), {checks[name]:,} checks"
        )
    ratio = statistics.median(times["with timers"]) / statistics.median(times["without timers"])
    more = checks["with timers"] / checks["without timers"]
    print(f"ratio with/without: {ratio:.2f} (checks {more:.2f})")


if __name__ == "__main__":
    main()

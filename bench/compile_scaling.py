"""Compile time of generated charts: 1,000 states / 5,000 transitions, and the scaling curve.

Run: `python bench/compile_scaling.py`. Prints the median of several runs per size
and the time per state, which should stay flat if compilation is linear.
"""

from __future__ import annotations

import statistics
import time

from bench.generate import flat_chart_yaml
from statekit.compiler.pipeline import compile_source


def median_seconds(text: str, repeats: int) -> float:
    """Median wall time of compiling `text`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = compile_source(text, "generated.yaml")
        times.append(time.perf_counter() - start)
        assert result.chart is not None, result.diagnostics[:3]
    return statistics.median(times)


def main() -> None:
    """Print a table of sizes and median compile times."""
    print(f"{'states':>7} {'transitions':>11} {'bytes':>8} {'median ms':>10} {'µs/state':>9}")
    for states in (250, 500, 1000, 2000):
        text = flat_chart_yaml(states, 5)
        seconds = median_seconds(text, 5 if states <= 1000 else 3)
        print(
            f"{states:>7} {states * 5:>11} {len(text):>8} {seconds * 1000:>10.1f}"
            f" {seconds / states * 1e6:>9.1f}"
        )


if __name__ == "__main__":
    main()

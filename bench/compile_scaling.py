"""Compile time of generated charts: 1,000 states / 5,000 transitions, and the scaling curve.

Run: `python bench/compile_scaling.py`. Prints the median of several runs per size
and the time per state, which should stay flat if compilation is linear.
"""

from __future__ import annotations

import statistics
import time

from bench import Row, Spread, record
from bench.generate import flat_chart_yaml
from statekit.compiler.pipeline import compile_source


def compile_seconds(text: str, repeats: int) -> list[float]:
    """The wall time of each of `repeats` compiles of `text`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = compile_source(text, "generated.yaml")
        times.append(time.perf_counter() - start)
        assert result.chart is not None, result.diagnostics[:3]
    return times


def main() -> None:
    """Print and record a table of sizes and median compile times."""
    print(f"{'states':>7} {'transitions':>11} {'bytes':>8} {'median ms':>10} {'µs/state':>9}")
    rows = []
    first: tuple[int, float] | None = None
    for states in (250, 500, 1000, 2000):
        text = flat_chart_yaml(states, 5)
        times = compile_seconds(text, 5 if states <= 1000 else 3)
        seconds = statistics.median(times)
        first = first or (states, seconds)
        print(
            f"{states:>7} {states * 5:>11} {len(text):>8} {seconds * 1000:>10.1f}"
            f" {seconds / states * 1e6:>9.1f}"
        )
        linear_ms = first[1] * 1000 * states / first[0]
        rows.append(
            Row(
                what=f"compile, {states:,} states / {states * 5:,} transitions"
                f" ({len(text):,} bytes)",
                statekit=Spread.of([t * 1000 for t in times]).text("ms"),
                limit=f"linear from {first[0]} states: {linear_ms:,.0f} ms",
                ratio=f"{seconds / states * 1e6:,.0f} µs per state",
                headline=states == 1000,
            )
        )
    record("compile_scaling", rows)


if __name__ == "__main__":
    main()

"""DOT generation time for a generated 500-state chart, and Graphviz's layout time apart.

Run: `python bench/dot_generation.py`. Our part (the diagram model, the views
and the DOT text) is timed in-process, median of several runs; the layout by
Graphviz's `dot` is timed separately, under a timeout, for the overview and for
every composite state's drawing (the large-chart mode), and for the single
all-in-one drawing that dot 2.43 cannot handle at this size.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from bench.generate import flat_chart_yaml
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.diagrams.dot import to_dot
from statekit.diagrams.layout import LayoutError, graphviz_version, render
from statekit.diagrams.model import extract
from statekit.diagrams.views import Split, plan_views

STATES = 500
LAYOUT_TIMEOUT = 60.0


def median_ms(action: Callable[[], object], repeats: int = 9) -> float:
    """Median wall time of `action` in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def generated_chart(states: int = STATES) -> CompiledChart:
    """The benchmark chart: `states` states in groups of 10, 5 transitions each."""
    result = compile_source(flat_chart_yaml(states, 5), "generated.yaml")
    assert result.chart is not None, result.diagnostics[:3]
    return result.chart


def main() -> None:
    """Print the generation medians, then the layout times."""
    chart = generated_chart()
    diagram = extract(chart)
    print(
        f"chart: {len(chart.states)} states, {len(chart.transitions)} transitions, "
        f"{len(chart.events)} events"
    )

    def split_dot() -> list[str]:
        return [to_dot(v) for v in plan_views(extract(chart), Split.AUTO)]

    def whole_dot() -> str:
        return to_dot(plan_views(extract(chart), Split.NEVER)[0])

    views = plan_views(diagram, Split.AUTO)
    print(f"extract (the diagram model)             {median_ms(lambda: extract(chart)):7.1f} ms")
    print(
        f"views + DOT, large-chart mode ({len(views)} drawings)"
        f" {median_ms(lambda: [to_dot(v) for v in plan_views(diagram)]):7.1f} ms"
    )
    print(f"extract + views + DOT, large-chart mode {median_ms(split_dot):7.1f} ms")
    print(f"extract + DOT, one drawing (--split never) {median_ms(whole_dot):7.1f} ms")

    try:
        version = graphviz_version()
    except LayoutError as exc:
        print(f"layout: skipped ({exc})")
        return
    print(f"layout by Graphviz dot {version} (SVG, timeout {LAYOUT_TIMEOUT:g} s):")
    times = []
    for view in views:
        start = time.perf_counter()
        render(to_dot(view), "svg", timeout=LAYOUT_TIMEOUT, what=view.title)
        times.append(time.perf_counter() - start)
    print(f"  overview                               {times[0] * 1000:7.0f} ms")
    rest = times[1:]
    print(
        f"  {len(rest)} composite drawings: median {statistics.median(rest) * 1000:.0f} ms,"
        f" max {max(rest) * 1000:.0f} ms, total {sum(rest):.1f} s"
    )
    whole = to_dot(plan_views(diagram, Split.NEVER)[0])
    start = time.perf_counter()
    try:
        render(whole, "svg", timeout=LAYOUT_TIMEOUT, what="the whole chart")
        print(f"  one drawing (--split never)            {(time.perf_counter() - start):7.1f} s")
    except LayoutError as exc:
        elapsed = time.perf_counter() - start
        print(f"  one drawing (--split never): failed after {elapsed:.1f} s: {exc}")


if __name__ == "__main__":
    main()

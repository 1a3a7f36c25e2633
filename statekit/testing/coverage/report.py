"""The coverage report: which charts, their numbers, and two of the output formats.

`collect` measures the charts (every chart the run loaded, or the charts under
the given paths, loaded or not); `terminal_lines` is the table printed at the
end of the run, `to_json` the JSON report. The HTML report is `html_report`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from statekit.analysis.explorer import explore
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file
from statekit.engine.chart import Chart
from statekit.testing.coverage.metrics import METRICS, ChartCoverage, measure
from statekit.testing.coverage.recorder import Recorder

CHART_SUFFIXES = (".yaml", ".yml")


class ThresholdError(ValueError):
    """A `--statekit-cov-fail-under` value that cannot be read."""


def chart_files(paths: Iterable[str | Path]) -> list[Path]:
    """The chart files under `paths` (files as given, folders searched), sorted."""
    found: set[Path] = set()
    for path in map(Path, paths):
        if path.is_dir():
            found.update(p for p in path.rglob("*") if p.suffix in CHART_SUFFIXES and p.is_file())
        elif path.is_file():
            found.add(path)
    return sorted(found)


def charts_under(paths: Sequence[str | Path]) -> dict[str, CompiledChart]:
    """The charts under `paths` that compile (what `collect` will measure), by digest."""
    found = {}
    for file in chart_files(paths):
        compiled = compile_file(file)
        if compiled.chart is not None:
            found[Chart(compiled.chart).digest] = compiled.chart
    return found


def collect(
    recorder: Recorder, paths: Sequence[str | Path] | None = None
) -> tuple[dict[str, ChartCoverage], list[str]]:
    """Each measured chart's coverage keyed by its name (`name (file)` when two differ
    only by file), and notes about files that could not be measured."""
    measured: list[ChartCoverage] = []
    notes: list[str] = []
    if paths is None:
        for record in recorder.charts.values():
            measured.append(measure(explore(record.chart), record))
    else:
        for file in chart_files(paths):
            compiled = compile_file(file)
            if compiled.chart is None:
                notes.append(f"{file}: not measured, it does not compile")
                continue
            digest = Chart(compiled.chart).digest
            found = recorder.charts.get(digest)
            measured.append(measure(explore(compiled.chart), found, file=str(file)))
    out: dict[str, ChartCoverage] = {}
    for coverage in sorted(measured, key=lambda c: (c.name, c.file)):
        key = coverage.name
        if key in out:
            key = f"{coverage.name} ({coverage.file})"
        n = 2
        while key in out:
            key, n = f"{coverage.name} ({coverage.file}) #{n}", n + 1
        out[key] = coverage
    return out, notes


def parse_thresholds(text: str) -> dict[str, float]:
    """`transition:100,rejection:90` → {"transition": 100.0, "rejection": 90.0}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition(":")
        if not sep or name.strip() not in METRICS:
            raise ThresholdError(
                f"--statekit-cov-fail-under: {part!r} is not METRIC:PERCENT "
                f"(metrics: {', '.join(METRICS)})"
            )
        try:
            number = float(value)
        except ValueError:
            raise ThresholdError(f"--statekit-cov-fail-under: {value!r} is not a number") from None
        if not 0 <= number <= 100:
            raise ThresholdError(f"--statekit-cov-fail-under: {number:g} is not within 0..100")
        out[name.strip()] = number
    return out


def failures(charts: dict[str, ChartCoverage], thresholds: dict[str, float]) -> list[str]:
    """One line per chart and metric below its threshold."""
    return [
        f"{key}: {metric} coverage {coverage.metric(metric).percent:.1f}% is below {bound:g}%"
        for key, coverage in charts.items()
        for metric, bound in thresholds.items()
        if coverage.metric(metric).percent < bound
    ]


def _cell(coverage: ChartCoverage, metric: str) -> str:
    m = coverage.metric(metric)
    return f"{m.covered}/{m.total} {m.percent:5.1f}%"


def terminal_lines(charts: dict[str, ChartCoverage]) -> list[str]:
    """The table printed at the end of the run (one row per chart)."""
    header = ["chart", *METRICS]
    rows = [
        [key + ("" if c.loaded else " (never loaded)"), *(_cell(c, m) for m in METRICS)]
        for key, c in charts.items()
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    if not rows:
        out.append("(no chart was measured)")
    return out


def to_json(charts: dict[str, ChartCoverage]) -> dict[str, Any]:
    """The JSON report: `{"version": 1, "charts": {NAME: {"file": ..., METRIC: {...}}}}`."""
    return {"version": 1, "charts": {key: c.to_json() for key, c in charts.items()}}

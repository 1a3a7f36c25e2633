"""The coverage report: which charts, their numbers, and the three output formats.

`collect` measures the charts (every chart the run loaded, or the charts under
the given paths, loaded or not); `terminal_lines` is the table printed at the
end of the run, `to_json` the JSON report, `write_html` the HTML report (one
page: per chart its diagram with untested transitions marked, then the lists of
what is missing with the path that would cover each).
"""

from __future__ import annotations

import html
import json
import re
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


# ---- HTML -------------------------------------------------------------------------------
STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
.full { background: #e8f5e9; } .partial { background: #ffebee; }
.legend span { display: inline-block; margin-right: 2em; }
.swatch-untested { color: #c62828; font-weight: bold; border-bottom: 3px dashed #c62828; }
.swatch-tested { border-bottom: 2px solid #000; }
.diagram svg { max-width: 100%; height: auto; }
g.node.unexercised path, g.node.unexercised polygon, g.node.unexercised ellipse {
  stroke: #e65100; stroke-width: 3; stroke-dasharray: 2 3; }
.swatch-unexercised { border: 3px dotted #e65100; padding: 0 0.3em; }
.missing li { margin: 0.2em 0; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""

LEGEND = (
    '<p class="legend"><span class="swatch-tested">── tested transition (solid black)</span>'
    '<span class="swatch-untested">- - untested transition (red, dashed, bold, label '
    "ends in “✗ untested”)</span>"
    '<span class="swatch-unexercised">state in a configuration with an event never sent there '
    "(orange, dotted outline; the pairs are listed below)</span></p>"
)

_NODE = re.compile(r'<g id="(node\d+)" class="node">\s*<title>s(\d+)</title>')


def _mark_states(svg: str, states: frozenset[int]) -> str:
    """Add the class `unexercised` to the SVG groups of `states` (titled `s<id>`)."""

    def mark(match: re.Match[str]) -> str:
        if int(match.group(2)) not in states:
            return match.group(0)
        return match.group(0).replace('class="node"', 'class="node unexercised"', 1)

    return _NODE.sub(mark, svg)


def _diagram(coverage: ChartCoverage) -> str:
    """The chart's SVG with untested transitions marked, or a note why there is none."""
    from statekit.diagrams.dot import to_dot
    from statekit.diagrams.layout import LayoutError, render
    from statekit.diagrams.model import extract
    from statekit.diagrams.views import whole_view

    dot = to_dot(whole_view(extract(coverage.ir)), marked=coverage.untested)
    try:
        svg = render(dot, "svg", what=coverage.name).decode()
    except LayoutError as exc:
        return f"<p>(no diagram: {html.escape(str(exc))})</p>"
    return _mark_states(svg[svg.find("<svg") :], coverage.unexercised)


def _path(
    path: list[str] | None,
    payloads: list[dict[str, Any] | None] | None,
    start: dict[str, Any] | None = None,
) -> str:
    """The event sequence, each event with its checked payload (`?`: only assumed; none
    shown for an event without fields), after the context to start the instance with
    when it is not the declared defaults."""
    if path is None:
        return "no path: no reachable configuration selects it (see `statekit lint`)"
    begin = ""
    if start:
        begin = f"start context <code>{html.escape(json.dumps(start, ensure_ascii=False))}</code>"
    if not path:
        return begin or "from the initial state"
    shown = payloads if payloads is not None and len(payloads) == len(path) else [{}] * len(path)
    events = " → ".join(
        f"<code>{html.escape(_event_text(e, p))}</code>" for e, p in zip(path, shown, strict=True)
    )
    return f"path: {begin}, then {events}" if begin else f"path: {events}"


def _event_text(event: str, payload: dict[str, Any] | None) -> str:
    if payload is None:
        return f"{event} ?"
    return f"{event} {json.dumps(payload, ensure_ascii=False)}" if payload else event


def _missing_item(metric: str, item: dict[str, Any]) -> str:
    if metric == "transition":
        what = html.escape(item["label"])
    elif metric == "classification":
        where = ", ".join(item["configuration"])
        what = f"<code>{html.escape(item['event'])}</code> in {{{html.escape(where)}}}"
    elif metric == "rejection":
        what = f"<code>{html.escape(item['reason'])}</code>"
        if "hint" in item:
            what += f" ({html.escape(item['hint'])})"
    else:
        a, b = item["events"]
        where = ", ".join(item["configuration"])
        untried = "; ".join(item["untried"])
        what = (
            f"<code>{html.escape(a)}</code> / <code>{html.escape(b)}</code> in "
            f"{{{html.escape(where)}}}, never tried: {html.escape(untried)}"
        )
    path = _path(item.get("path"), item.get("payloads"), item.get("start_context"))
    return f'<li class="missing-{metric}">✗ {what} — {path}</li>'


# Once the page has laid out, it records what it drew in `<body data-rendered>` (one
# object per chart: the diagram's size, the marked edges and states and their stroke):
# a headless browser's DOM dump then shows that the diagrams render and are marked.
CHECK_SCRIPT = """
addEventListener("load", () => {
  const charts = [...document.querySelectorAll("section.chart")].map((section) => {
    const svg = section.querySelector(".diagram svg");
    const box = svg ? svg.getBBox() : { width: 0, height: 0 };
    const edge = section.querySelector("g.edge.untested path");
    const node = section.querySelector("g.node.unexercised path, g.node.unexercised polygon");
    return {
      chart: section.id,
      width: Math.round(box.width),
      height: Math.round(box.height),
      untested: section.querySelectorAll("g.edge.untested").length,
      unexercised: section.querySelectorAll("g.node.unexercised").length,
      untested_stroke: edge ? getComputedStyle(edge).stroke : null,
      unexercised_dash: node ? getComputedStyle(node).strokeDasharray : null,
    };
  });
  document.body.dataset.rendered = JSON.stringify(charts);
});
"""


def html_page(charts: dict[str, ChartCoverage]) -> str:
    """The whole HTML report as one page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>statekit coverage</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>statekit coverage</h1>",
        "<table><tr><th>chart</th>" + "".join(f"<th>{m}</th>" for m in METRICS) + "</tr>",
    ]
    for key, c in charts.items():
        cells = "".join(
            f'<td class="{"full" if c.metric(m).percent >= 100 else "partial"}">'
            f"{html.escape(_cell(c, m))}</td>"
            for m in METRICS
        )
        parts.append(
            f'<tr><td><a href="#{html.escape(key)}">{html.escape(key)}</a></td>{cells}</tr>'
        )
    parts.append("</table>")
    for key, c in charts.items():
        parts.append(f'<section class="chart" id="{html.escape(key)}">')
        state = "" if c.loaded else " — never loaded during the run"
        parts.append(f"<h2>{html.escape(key)}</h2><p><code>{html.escape(c.file)}</code>{state}</p>")
        parts.append(LEGEND)
        parts.append(f'<div class="diagram">{_diagram(c)}</div>')
        for metric in METRICS:
            m = c.metric(metric)
            parts.append(f"<h3>{metric} coverage: {m.covered}/{m.total} ({m.percent:.1f}%)</h3>")
            if m.missing:
                items = "".join(_missing_item(metric, item) for item in m.missing)
                parts.append(f'<ul class="missing">{items}</ul>')
            else:
                parts.append("<p>✓ nothing missing</p>")
        parts.append("</section>")
    parts.append(f"<script>{CHECK_SCRIPT}</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_html(charts: dict[str, ChartCoverage], directory: str | Path) -> Path:
    """Write `index.html` into `directory` (created); return its path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    page = out / "index.html"
    page.write_text(html_page(charts), encoding="utf-8")
    return page

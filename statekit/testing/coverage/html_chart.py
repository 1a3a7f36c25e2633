"""One chart's page of the HTML coverage report: its four numbers, its diagram with the
untested transitions and the states of unexercised pairs marked, and what is missing,
grouped by kind (and, for classification and race, by configuration), each item with
the shortest path that would cover it, behind collapsible groups and a text filter."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from statekit.diagrams.dot import to_dot
from statekit.diagrams.layout import LayoutError, render
from statekit.diagrams.model import extract
from statekit.diagrams.views import whole_view
from statekit.testing.coverage.html_frame import Stamp, escape, metric_cell, page, scale
from statekit.testing.coverage.metrics import METRICS, ChartCoverage

OPEN_GROUPS_UP_TO = 20
"""A kind with at most this many missing items shows its groups open; with more, the
groups start collapsed (one line per configuration)."""

GROUPED = frozenset({"classification", "race"})
"""The kinds whose missing items are grouped by configuration."""

LEGEND = (
    '<p class="legend"><span class="swatch-tested">── tested transition (solid black)</span>'
    '<span class="swatch-untested">- - untested transition (red, dashed, bold, label '
    "ends in “✗ untested”)</span>"
    '<span class="swatch-untested-inside">untested targetless transition (listed inside its '
    "state: red text, then “✗ untested”)</span>"
    '<span class="swatch-unexercised">state in a configuration with an event never sent there '
    "(orange, dotted outline; the pairs are listed below)</span></p>"
)

PATH_LEGEND = (
    '<p class="paths-legend" id="path-legend">Each item ends with the shortest event sequence '
    "from the initial state that covers it, an event with its payload when one was found "
    "and checked. <code>EVENT ?</code>: no payload was found, the step is only assumed: the "
    "data guards on the way must take it (a total above 0, a count below its limit), and "
    "arranging that, by earlier events or the start context, is the test's job "
    "(<code>statekit paths</code> lists the guard outcomes each step assumes).</p>"
)
"""What the paths of the missing items say, above them (`?` included)."""

KIND_TEXT = {
    "transition": "declared transitions never fired",
    "classification": "configuration and event pairs never classified",
    "rejection": "rejection reasons never seen",
    "race": "races whose two orders were not both delivered",
}

_NODE = re.compile(r'<g id="(node\d+)" class="node">\s*<title>s(\d+)</title>')


def _mark_states(svg: str, states: frozenset[int]) -> str:
    """Add the class `unexercised` to the SVG groups of `states` (titled `s<id>`)."""

    def mark(match: re.Match[str]) -> str:
        if int(match.group(2)) not in states:
            return match.group(0)
        return match.group(0).replace('class="node"', 'class="node unexercised"', 1)

    return _NODE.sub(mark, svg)


def diagram(coverage: ChartCoverage) -> str:
    """The chart's SVG with untested transitions marked, or a note why there is none."""
    dot = to_dot(whole_view(extract(coverage.ir)), marked=coverage.untested)
    try:
        svg = render(dot, "svg", what=coverage.name).decode()
    except LayoutError as exc:
        return f'<p class="note">no diagram: {escape(str(exc))}</p>'
    return _mark_states(svg[svg.find("<svg") :], coverage.unexercised)


def _event_text(event: str, payload: dict[str, Any] | None) -> str:
    if payload is None:
        return f"{event} ?"
    return f"{event} {json.dumps(payload, ensure_ascii=False)}" if payload else event


def path_text(
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
        begin = f"start context <code>{escape(json.dumps(start, ensure_ascii=False))}</code>"
    if not path:
        return begin or "from the initial state"
    shown = payloads if payloads is not None and len(payloads) == len(path) else [{}] * len(path)
    events = " → ".join(
        f"<code>{escape(_event_text(e, p))}</code>" for e, p in zip(path, shown, strict=True)
    )
    return f"path: {begin}, then {events}" if begin else f"path: {events}"


def _configuration(item: dict[str, Any]) -> str:
    return "{" + ", ".join(item["configuration"]) + "}"


def missing_item(metric: str, item: dict[str, Any]) -> str:
    """One missing item as a list entry: what, then the path that covers it (the
    configuration is left to the group's heading for grouped kinds)."""
    if metric == "transition":
        what = escape(item["label"])
    elif metric == "classification":
        what = f"<code>{escape(item['event'])}</code>"
    elif metric == "rejection":
        what = f"<code>{escape(item['reason'])}</code>"
        if "hint" in item:
            what += f" ({escape(item['hint'])})"
    else:
        a, b = item["events"]
        untried = "; ".join(item["untried"])
        what = (
            f"<code>{escape(a)}</code> / <code>{escape(b)}</code>, never tried: {escape(untried)}"
        )
    path = path_text(item.get("path"), item.get("payloads"), item.get("start_context"))
    return f'<li class="missing-{metric}">✗ {what} — {path}</li>'


def _items(metric: str, items: Iterable[dict[str, Any]]) -> str:
    return '<ul class="missing">' + "".join(missing_item(metric, i) for i in items) + "</ul>"


def _groups(metric: str, items: tuple[dict[str, Any], ...]) -> str:
    by_configuration: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_configuration.setdefault(_configuration(item), []).append(item)
    opened = " open" if len(items) <= OPEN_GROUPS_UP_TO else ""
    noun = "event" if metric == "classification" else "pair"
    parts = []
    for where, group in by_configuration.items():
        count = f"{len(group)} {noun}{'' if len(group) == 1 else 's'}"
        parts.append(
            f'<details class="group"{opened}><summary>in {escape(where)}: {count}'
            f'<span class="shown"></span></summary>{_items(metric, group)}</details>'
        )
    return "".join(parts)


def _kind(coverage: ChartCoverage, metric: str) -> str:
    m = coverage.metric(metric)
    head = (
        f"{metric}: {len(m.missing)} missing "
        f'<span class="count">({m.covered}/{m.total} covered; {KIND_TEXT[metric]})</span>'
    )
    if not m.missing:
        return (
            f'<details class="kind" id="missing-{metric}"><summary>{metric}: ✓ nothing '
            f'missing <span class="count">({m.covered}/{m.total} covered)</span></summary>'
            '<p class="no-items">every item is covered</p></details>'
        )
    inner = _groups(metric, m.missing) if metric in GROUPED else _items(metric, m.missing)
    return (
        f'<details class="kind" id="missing-{metric}" open><summary>{head}'
        f'<span class="shown"></span></summary>{inner}</details>'
    )


def _nav(neighbours: tuple[str | None, str | None]) -> str:
    before, after = neighbours
    links = ['<a href="index.html" rel="index">« index</a>']
    if before is not None:
        links.append(f'<a href="{escape(before)}" rel="prev">&lsaquo; previous chart</a>')
    if after is not None:
        links.append(f'<a href="{escape(after)}" rel="next">next chart &rsaquo;</a>')
    return f'<nav class="pages">{"".join(links)}</nav>'


def chart_page(
    key: str,
    coverage: ChartCoverage,
    stamp: Stamp,
    neighbours: tuple[str | None, str | None] = (None, None),
) -> str:
    """The page of the chart reported as `key`; `neighbours` are the page file names of
    the charts before and after it in the index (None at either end)."""
    notes = []
    if not coverage.loaded:
        notes.append('<p class="note">never loaded during the run: every number is 0</p>')
    if not coverage.complete:
        notes.append(
            '<p class="note">the exploration stopped at its bound: the totals count the '
            "explored configurations only</p>"
        )
    head = "".join(f"<th>{m}</th>" for m in METRICS)
    cells = "".join(metric_cell(m, coverage.metric(m)) for m in METRICS)
    summary = (
        f'<table class="coverage numbers"><thead><tr>{head}</tr></thead>'
        f"<tbody><tr>{cells}</tr></tbody></table>"
    )
    tools = (
        '<div class="tools" role="search" hidden>'
        '<label>filter missing items <input type="search" id="filter-missing" '
        'placeholder="event, state, reason…" autocomplete="off"></label>'
        '<button type="button" id="expand-all">expand all</button>'
        '<button type="button" id="collapse-all">collapse all</button>'
        '<span class="count">keys: <kbd>/</kbd> filter, <kbd>[</kbd> <kbd>]</kbd> previous '
        "and next chart, <kbd>u</kbd> index</span></div>"
    )
    kinds = "".join(_kind(coverage, m) for m in METRICS)
    jumps = "".join(
        f'<a href="#missing-{m}">{m} ({len(coverage.metric(m).missing)})</a>' for m in METRICS
    )
    contents = (
        f'<nav class="contents">on this page: <a href="#diagram">diagram</a> '
        f"· missing items: {jumps}</nav>"
    )
    body = (
        f"<p>chart file <code>{escape(coverage.file)}</code></p>{''.join(notes)}"
        f"{summary}{scale()}{contents}"
        f'<section id="diagram"><h2>diagram</h2>{LEGEND}'
        '<div class="tools" hidden><label><input type="checkbox" '
        'id="actual-size"> actual size (scroll to move around)</label></div>'
        f'<div class="diagram">{diagram(coverage)}</div></section>'
        f'<section id="missing"><h2>what is missing</h2>{PATH_LEGEND}{tools}{kinds}</section>'
    )
    return page(f"coverage of {key}", body, stamp, up=_nav(neighbours))

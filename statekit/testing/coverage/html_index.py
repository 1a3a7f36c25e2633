"""The index page of the HTML coverage report: one row per chart (its four numbers,
coloured by band, and how many items are missing), a totals row, a sortable table, a
text filter and "hide fully covered", and a link to each chart's page."""

from __future__ import annotations

from collections.abc import Mapping

from statekit.testing.coverage.html_frame import Stamp, escape, metric_cell, page, scale
from statekit.testing.coverage.metrics import METRICS, ChartCoverage, Metric

TITLE = "statekit coverage"


def missing_count(coverage: ChartCoverage) -> int:
    """How many items of the four metrics `coverage` misses."""
    return sum(len(coverage.metric(m).missing) for m in METRICS)


def _header() -> str:
    def sortable(label: str, *, first: str = "ascending", sort: str = "none", cls: str = "") -> str:
        return (
            f'<th class="{cls}" aria-sort="{sort}" data-first-order="{first}">'
            f'<button type="button" title="sort by {label}">{label}</button></th>'
        )

    cells = [
        sortable("chart", sort="ascending", cls="name"),
        sortable("file", cls="name"),
        *(sortable(metric) for metric in METRICS),
        sortable("missing", first="descending"),
    ]
    return f"<thead><tr>{''.join(cells)}</tr></thead>"


def _row(key: str, coverage: ChartCoverage, href: str) -> str:
    never = ' <span class="count">(never loaded)</span>' if not coverage.loaded else ""
    missing = missing_count(coverage)
    search = escape(f"{key} {coverage.file}".lower())
    cells = "".join(metric_cell(m, coverage.metric(m)) for m in METRICS)
    return (
        f'<tr data-search="{search}" data-missing="{missing}">'
        f'<td class="name">'
        f'<a href="{escape(href)}">{escape(key)}</a>{never}</td>'
        f'<td class="name"><code>{escape(coverage.file)}</code></td>'
        f'{cells}<td data-sort="{missing}">{missing}</td></tr>'
    )


def _charts(count: int) -> str:
    return f"{count} chart{'' if count == 1 else 's'}"


def _totals(charts: Mapping[str, ChartCoverage]) -> str:
    cells = []
    for name in METRICS:
        covered = sum(c.metric(name).covered for c in charts.values())
        total = sum(c.metric(name).total for c in charts.values())
        cells.append(metric_cell(name, Metric(covered, total, ())))
    missing = sum(missing_count(c) for c in charts.values())
    return (
        f'<tfoot><tr><td class="name" colspan="2" data-charts="{len(charts)}">'
        f"Total ({_charts(len(charts))})</td>"
        f"{''.join(cells)}<td data-missing>{missing}</td></tr></tfoot>"
    )


def index_page(charts: Mapping[str, ChartCoverage], pages: Mapping[str, str], stamp: Stamp) -> str:
    """The index page of `charts` (keyed as in the report), each linked to its page
    file name in `pages`."""
    tools = (
        '<div class="tools" role="search" hidden>'
        '<label>filter charts <input type="search" id="filter" placeholder="name or file…"'
        ' autocomplete="off"></label>'
        '<label><input type="checkbox" id="hide-covered"> hide fully covered</label>'
        '<span class="count">keys: <kbd>/</kbd> filter, <kbd>]</kbd> the first chart '
        "shown, <kbd>[</kbd> the last</span></div>"
    )
    rows = "".join(_row(key, c, pages[key]) for key, c in charts.items())

    table = (
        '<div class="wide"><table class="coverage sortable charts">'
        f"{_header()}<tbody>{rows}</tbody>{_totals(charts)}</table></div>"
    )
    empty = "no chart was measured" if not charts else "no chart matches the filter"
    body = (
        f"{tools}{table}"
        f'<p id="no-rows"{"" if not charts else " hidden"}>{empty}</p>'
        f"{scale()}"
        "<p>Each cell is covered/total and the percentage; a chart's page lists what is "
        "missing with the shortest path to it.</p>"
    )
    return page(TITLE, body, stamp)

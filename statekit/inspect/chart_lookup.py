"""The charts a page draws and replays with: those given with `--chart`, and those whose
YAML source the store kept (`statekit_charts.source`, compiled once per digest).

A stored source is used only when it compiles to the digest recorded with it
(`runner.chart_versions.stored_chart`), so a page never draws or replays a chart
other than the one the instances ran on. A chart given with `--chart` wins over
the stored source of the same version when both have the same digest; a given
chart whose digest differs from the store's for that version is not used for
that version (the page says so).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from statekit.engine.chart import Chart
from statekit.runner.chart_versions import ChartSet, stored_chart
from statekit.runner.store.base import Store
from statekit.runner.store.rows import ChartRow

_compiled: dict[str, Chart | None] = {}
"""Stored sources compiled so far, by digest (None: it did not compile to its digest)."""
_lock = threading.Lock()
CACHED_SOURCES = 256
"""How many compiled stored charts are kept."""


def _from_row(row: ChartRow) -> Chart | None:
    if row.source is None:
        return None
    with _lock:
        if row.digest in _compiled:
            return _compiled[row.digest]
    chart = stored_chart(row)
    with _lock:
        if len(_compiled) >= CACHED_SOURCES:
            _compiled.pop(next(iter(_compiled)))
        _compiled[row.digest] = chart
    return chart


def chart_versions(store: Store, given: Iterable[Chart], name: str) -> dict[int, Chart]:
    """Every version of the chart `name` a page can use, by version: the store's (given
    or compiled from its stored source) and those given that the store does not hold."""
    rows = [row for row in store.charts() if row.name == name]
    mine = {chart.digest: chart for chart in given if chart.name == name}
    found: dict[int, Chart] = {}
    for row in rows:
        chart = mine.get(row.digest) or _from_row(row)
        if chart is not None:
            found[row.version] = chart
    stored_versions = {row.version for row in rows}
    for chart in mine.values():
        if chart.version not in stored_versions:
            found.setdefault(chart.version, chart)
    return found


def chart_set(store: Store, given: Iterable[Chart], name: str) -> ChartSet | None:
    """A `ChartSet` of every usable version of `name` (newest as current), or None when
    there is none."""
    versions = chart_versions(store, given, name)
    if not versions:
        return None
    ordered = [versions[v] for v in sorted(versions)]
    return ChartSet(ordered[-1], ordered[:-1], store)

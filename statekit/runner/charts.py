"""The charts a runner knows, by version: the current one, older ones given to it,
and older ones whose YAML source the store kept (so that a history written
under chart version 1 can still be replayed after version 2 is deployed)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.errors import ChartVersionError
from statekit.runner.store.base import Store


def chart_source(chart: Chart) -> str | None:
    """The YAML text of `chart` when its file still holds exactly that chart."""
    try:
        text = Path(chart.ir.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    result = compile_source(text, chart.ir.file)
    if result.chart is None or Chart(result.chart).digest != chart.digest:
        return None
    return text


class ChartSet:
    """Charts of one name by version; `get(version)` is None for an unknown version."""

    def __init__(self, current: Chart, previous: Iterable[Chart], store: Store) -> None:
        self.current = current
        self._by_version: dict[int, Chart] = {current.version: current}
        for chart in previous:
            if chart.name != current.name:
                raise ChartVersionError(
                    f"previous chart {chart.name!r} is not a version of {current.name!r}"
                )
            self._by_version.setdefault(chart.version, chart)
        self._store = store
        self._looked_in_store = False

    def get(self, version: int) -> Chart | None:
        """The chart of this version (compiled from the store's source if needed)."""
        chart = self._by_version.get(version)
        if chart is None and not self._looked_in_store:
            self._looked_in_store = True
            for row in self._store.charts():
                if row.name != self.current.name or row.source is None:
                    continue
                if row.version in self._by_version:
                    continue
                result = compile_source(row.source, f"<stored chart {row.name} v{row.version}>")
                if result.chart is not None:
                    loaded = Chart(result.chart)
                    if loaded.digest == row.digest:
                        self._by_version[row.version] = loaded
            chart = self._by_version.get(version)
        return chart

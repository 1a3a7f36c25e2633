"""Chart versions: the charts a runner knows by version, and moving a state to a newer one.

`ChartSet` holds the current chart, older ones given to it, and older ones
whose YAML source the store kept (so that a history written under chart
version 1 can still be replayed after version 2 is deployed); `chart_sets`
builds one per chart name from a store. A stored source is used only when it
compiles to the digest recorded with it. `carry_over` is the one way a
state moves to a newer version of its chart.

A version is one digest: `refuse_changed_version` is the one check that a chart
given to a command that opens a store (`Runner`, and so `run`, `worker` and
`migrate`; `verify --chart`) is not a changed text of a version the store holds
with another digest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.runner.errors import BUMP_VERSION, ChangedVersionError, ChartVersionError
from statekit.runner.store.base import Store
from statekit.runner.store.rows import ChartRow


def stored_chart(row: ChartRow) -> Chart | None:
    """The chart compiled from the source the store kept for `row`; None when there is
    none, or when it does not compile to the digest recorded with it."""
    if row.source is None:
        return None
    result = compile_source(row.source, f"<stored chart {row.name} v{row.version}>")
    if result.chart is None:
        return None
    chart = Chart(result.chart, source=row.source)
    return chart if chart.digest == row.digest else None


def refuse_changed_version(store: Store, charts: Iterable[Chart]) -> None:
    """A ChangedVersionError when the store holds the name and version of one of `charts`
    with another digest: the message names the version, both digests and what to do
    (bump `version:`); the error carries both charts, for a caller to say what changed."""
    given = list(charts)
    rows = store.charts()
    for chart in given:
        for row in rows:
            if (row.name, row.version) != (chart.name, chart.version):
                continue
            if row.digest == chart.digest:
                continue
            stored = stored_chart(row)
            raise ChangedVersionError(
                f"chart {chart.name!r} version {chart.version} is in the store with digest "
                f"{row.digest}, this chart has digest {chart.digest}: {BUMP_VERSION}",
                chart.ir,
                None if stored is None else stored.ir,
            )


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
                if row.name != self.current.name or row.version in self._by_version:
                    continue
                loaded = stored_chart(row)
                if loaded is not None:
                    self._by_version[row.version] = loaded
            chart = self._by_version.get(version)
        return chart


def chart_sets(store: Store, given: Iterable[Chart] = ()) -> dict[str, ChartSet]:
    """A `ChartSet` for each chart name among `given` and the store's charts (those whose
    stored source compiles to their recorded digest): its newest version as current,
    the others as previous."""
    by_name: dict[str, list[Chart]] = {}
    for chart in given:
        by_name.setdefault(chart.name, []).append(chart)
    for row in store.charts():
        if any(c.digest == row.digest for c in by_name.get(row.name, [])):
            continue
        loaded = stored_chart(row)
        if loaded is not None:
            by_name.setdefault(row.name, []).append(loaded)
    sets = {}
    for name, versions in by_name.items():
        versions.sort(key=lambda c: c.version)
        sets[name] = ChartSet(versions[-1], versions[:-1], store)
    return sets


def carry_over(state: State, chart: Chart, where: str = "the instance") -> State:
    """`state` (of an older version of the chart) expressed in `chart` (see
    `carry_over_data`); a state of `chart` itself is returned as is."""
    if state.chart_digest == chart.digest:
        return state
    data = state.to_data()
    return carry_over_data(chart, data, data["version"], where)


def carry_over_data(chart: Chart, data: Mapping[str, Any], version: int, where: str) -> State:
    """The one way a state moves to a newer chart version: `data` (a state's data made
    under `version` of the chart) expressed in `chart`.

    A ChartVersionError names the first stored state `chart` no longer has, in the
    configuration or in the history (a history naming a removed state would
    otherwise be restored into it later); any other misfit is a ChartVersionError
    saying why.
    """
    missing = _missing_state(chart, data)
    if missing is not None:
        path, remembered = missing
        how = f"remembers state {path!r} in its history" if remembered else f"is in state {path!r}"
        raise ChartVersionError(
            f"{where} (chart {chart.name!r} version {version}) {how}, which chart "
            f"{chart.name!r} version {chart.version} no longer has"
        )
    moved = {**data, "format": STATE_FORMAT, "version": chart.version, "digest": chart.digest}
    try:
        return State.from_json(chart, moved)
    except StateFormatError as exc:
        raise ChartVersionError(
            f"{where} cannot move from chart version {version} to {chart.version}: {exc}"
        ) from exc


def _missing_state(chart: Chart, data: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The first path of `data` that `chart` has no state for, and whether it was
    found in the history (malformed data is left to `State.from_json`)."""
    index = chart.ir.path_index
    paths = data["configuration"]
    if isinstance(paths, list):
        for path in paths:
            if isinstance(path, str) and path not in index:
                return path, False
    history = data["history"]
    if isinstance(history, dict):
        for key, value in history.items():
            for path in [key, *(value if isinstance(value, list) else [])]:
                if isinstance(path, str) and path not in index:
                    return path, True
    return None

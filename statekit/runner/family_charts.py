"""The charts a runner knows besides its own: those of the instances its family steps
create and feed (invoked children) and of the instances messages are delivered to.

`Runner(chart, store, charts=[payment, shipment])` gives them, by name: only instances of
those names (and of the runner's own chart) are decided by the runner, so that an event
meant for another chart is still refused rather than applied by a chart nobody named.
Their older versions are found among the store's kept sources
(`chart_versions.chart_sets`); an instance runs on the version it was created under, as
the runner's own chart's instances do.
"""

from __future__ import annotations

from collections.abc import Iterable

from statekit.compiler.ir import Send
from statekit.engine.chart import Chart
from statekit.runner.chart_versions import ChartSet, chart_sets
from statekit.runner.store.base import Store
from statekit.runner.store.rows import InstanceRow


class FamilyCharts:
    """Chart versions of the names `given` (the newest of each name current, older ones
    also from the store's kept sources)."""

    __slots__ = ("_given", "_names", "_sets", "_store")

    def __init__(self, given: Iterable[Chart], store: Store) -> None:
        self._given = tuple(given)
        self._names = frozenset(c.name for c in self._given)
        self._store = store
        self._sets: dict[str, ChartSet] | None = None

    @property
    def given(self) -> tuple[Chart, ...]:
        """The charts the runner was given (registered in its store)."""
        return self._given

    def current(self, name: str) -> Chart | None:
        """The newest version known of chart `name` (a child is created on it unless its
        invoke pins a version); None when no chart of that name is known."""
        found = self._set(name)
        return None if found is None else found.current

    def version(self, name: str, version: int) -> Chart | None:
        """Version `version` of chart `name` (None: not known)."""
        found = self._set(name)
        return None if found is None else found.get(version)

    def chart_of(self, row: InstanceRow) -> Chart | None:
        """The chart the stored instance `row` runs on (its name, version and digest);
        None when no such chart is known."""
        if not isinstance(row.chart_version, int):
            return None
        chart = self.version(row.chart_name, row.chart_version)
        return chart if chart is not None and chart.digest == row.chart_digest else None

    @property
    def names(self) -> frozenset[str]:
        """The chart names given."""
        return self._names

    def chart_set(self, name: str) -> ChartSet | None:
        """The versions of chart `name` (None: not a name given)."""
        return self._set(name)

    def _set(self, name: str) -> ChartSet | None:
        if name not in self._names:
            return None
        sets = self._sets
        if sets is None:
            sets = self._sets = {
                n: s for n, s in chart_sets(self._store, self._given).items() if n in self._names
            }
        return sets.get(name)


def composes(chart: Chart) -> bool:
    """Whether `chart` invokes a chart or sends an event to another instance."""
    ir = chart.ir
    if ir.invocations:
        return True
    effects = [e for s in ir.states for e in (*s.entry, *s.exit)]
    effects += [e for t in ir.transitions for e in t.effects]
    return any(isinstance(e, Send) and e.to is not None for e in effects)

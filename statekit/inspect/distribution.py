"""The live distribution of a chart version's instances over its states.

One grouped query over the instance rows of that chart version
(`statekit_instances`, by stored configuration: as many groups as distinct
configurations, not as instances), then each configuration's paths mapped to
state ids: a state's count is the number of instances in which it is active,
so a composite state counts the instances anywhere inside it. A stored path
the chart does not have (a damaged row) is counted under `unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.engine.chart import Chart
from statekit.runner.json_text import parse_json
from statekit.runner.store.base import Store


@dataclass(frozen=True, slots=True)
class Distribution:
    """Instances of one chart version: in total, per state id (ancestors counted), and
    those whose stored configuration names no state of the chart (`unknown`)."""

    total: int
    by_state: dict[int, int]
    unknown: int


def distribution(store: Store, chart: Chart) -> Distribution:
    """How the instances of `chart` (its name and version) spread over its states."""
    rows = store.execute(
        "SELECT configuration, COUNT(*) FROM statekit_instances "
        "WHERE chart_name = ? AND chart_version = ? GROUP BY configuration",
        (chart.name, chart.version),
    ).fetchall()
    index = chart.ir.path_index
    states = chart.ir.states
    by_state: dict[int, int] = {}
    total = unknown = 0
    for text, count in rows:
        count = int(count)
        total += count
        try:
            paths = parse_json(text)
        except ValueError:
            paths = None
        ids: set[int] = set()
        if isinstance(paths, list) and all(isinstance(p, str) and p in index for p in paths):
            for path in paths:
                sid = index[path]
                ids.add(sid)
                ids.update(a for a in states[sid].ancestors if a != 0)
        if not ids:
            unknown += count
            continue
        for sid in ids:
            by_state[sid] = by_state.get(sid, 0) + count
    return Distribution(total, by_state, unknown)

"""Which armed timers a `pause:`/`resume:` name denotes in a chart.

A name is a delayed `send`'s `id:` (its timer is armed under the name itself) and
the `id:` of any named `after` timer (armed under `after(<id>)@<state path>` or
`at(<id>)@<state path>`): `pause: sla` pauses every one of them that is armed.
Worked out once per chart's tables (its timers are fixed) and kept beside them.
"""

from __future__ import annotations

import weakref

from statekit.engine.tables import Tables

_BY_CHART: weakref.WeakKeyDictionary[Tables, dict[str, tuple[str, ...]]] = (
    weakref.WeakKeyDictionary()
)


def timers_named(tables: Tables, name: str) -> tuple[str, ...]:
    """The IDs under which a timer named `name` is armed: the send ID `name`, then the
    chart's `after` timers with that `id:`, in declaration order."""
    table = _BY_CHART.get(tables)
    if table is None:
        table = _BY_CHART[tables] = _table(tables)
    return table.get(name) or (name,)


def _table(tables: Tables) -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for timer in tables.chart.timers:
        if timer.label is not None:
            table.setdefault(timer.label, [timer.label]).append(timer.name)
    return {name: tuple(ids) for name, ids in table.items()}

"""A state as the instance row stores it, and back.

Rows hold the minimum: an instance row keeps its active configuration
(dotted paths), context and history as canonical JSON beside the chart's
name, version and digest, and its arming counter when it ever armed a timer;
its armed timers are its rows of `statekit_timers` (`runner.timers`), read
only when the stored counter says it armed one; everything else is rebuilt
from the chart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.runner.errors import BUMP_VERSION, ChartVersionError, CorruptRowError
from statekit.runner.json_text import parse_json
from statekit.runner.store.rows import InstanceRow, StateColumns, TimerRow, positional
from statekit.runner.timers import timers_text


def state_columns(state: State) -> StateColumns:
    """The columns of `state` (a configuration's text is computed once; the timers are
    rows of their own: `runner.timers`)."""
    key = (state.chart_digest, state.active_ids)
    configuration = _CONFIGURATIONS.get(key)
    if configuration is None:
        if len(_CONFIGURATIONS) > 4096:
            _CONFIGURATIONS.clear()
        configuration = _CONFIGURATIONS[key] = canonical_json(state.to_data()["configuration"])
    history = state.history
    return _columns(
        configuration,
        canonical_json(dict(state.context)),
        canonical_json({k: list(v) for k, v in history.items()}) if history else "{}",
        timers_text(state),
    )


# The instance row's columns, built positionally (`rows.positional`): once per
# accepted event.
_columns = positional(StateColumns, "configuration", "context", "history", "timers")
_CONFIGURATIONS: dict[tuple[str, frozenset[int]], str] = {}


def state_of(
    chart: Chart, row: InstanceRow, timer_rows: Callable[[str], Sequence[TimerRow]]
) -> State:
    """The state stored in `row` and, when it ever armed a timer, in the instance's timer
    rows (`timer_rows(instance_id)`), which must run on `chart` (the chart of its own
    version: instances stay on their version until migrated, see
    `runner.migration`). Another chart, another version, or the same version with
    another digest is a ChartVersionError.
    """
    where = f"instance {row.instance_id!r}"
    if row.chart_name != chart.name:
        raise ChartVersionError(f"{where} runs on chart {row.chart_name!r}, not on {chart.name!r}")
    if row.chart_digest != chart.digest:
        if row.chart_version > chart.version:
            raise ChartVersionError(
                f"{where} runs on chart {chart.name!r} version {row.chart_version}, newer than "
                f"this runner's version {chart.version}: unknown chart version"
            )
        if row.chart_version == chart.version:
            raise ChartVersionError(
                f"{where} runs on chart {chart.name!r} version {row.chart_version} "
                f"({row.chart_digest}), but this runner's version {chart.version} has digest "
                f"{chart.digest}: unknown chart version ({BUMP_VERSION})"
            )
        raise ChartVersionError(
            f"{where} runs on chart {chart.name!r} version {row.chart_version} "
            f"({row.chart_digest}), which this runner does not have (pass it as a previous "
            "chart, or keep its source in the store)"
        )
    data = {
        "format": STATE_FORMAT,
        "statechart": chart.name,
        "version": chart.version,
        "digest": chart.digest,
        "configuration": loads(row.columns.configuration, f"{where}: the stored configuration"),
        "context": loads(row.columns.context, f"{where}: the stored context"),
        "history": loads(row.columns.history, f"{where}: the stored history"),
    }
    if row.columns.timers is not None:
        counter = loads(row.columns.timers, f"{where}: the stored timers")
        if not isinstance(counter, dict) or set(counter) != {"timer_generation"}:
            raise CorruptRowError(
                f"{where}: the stored timers are not an object of one key, timer_generation"
            )
        data["timer_generation"] = counter["timer_generation"]
        data["timers"] = armed_records(row.instance_id, timer_rows(row.instance_id))
    try:
        return State.from_json(chart, data)
    except StateFormatError as exc:
        raise CorruptRowError(f"{where}: stored state does not fit its chart: {exc}") from exc


def armed_records(instance_id: str, rows: Sequence[TimerRow]) -> list[Any]:
    """The armed timers of an instance as `State.from_json` reads them: each row's record,
    in arming order (by generation); a row without a readable record of its own timer is
    a CorruptRowError."""
    records: list[tuple[Any, Any]] = []
    for row in rows:
        where = f"instance {instance_id!r}: the timer row {row.timer_id!r}"
        if row.record is None:
            raise CorruptRowError(f"{where} holds no timer record")
        record = loads(row.record, f"{where}: its record")
        if not isinstance(record, dict) or record.get("id") != row.timer_id:
            raise CorruptRowError(f"{where}: its record is not a timer of that ID")
        generation = record.get("generation")
        records.append((generation if type(generation) is int else -1, record))
    records.sort(key=lambda pair: pair[0])
    return [record for _generation, record in records]


def loads(text: str, what: str) -> Any:
    """`json.loads` of a stored JSON text, with a CorruptRowError naming `what` instead
    of a ValueError."""
    if not isinstance(text, str):
        raise CorruptRowError(f"{what} is not a text but {type(text).__name__}")
    try:
        return parse_json(text)
    except ValueError as exc:
        raise CorruptRowError(f"{what} is not valid JSON: {exc}") from exc

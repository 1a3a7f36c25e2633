"""A state as the instance row stores it, and back.

Rows hold the minimum: an instance row keeps its active configuration
(dotted paths), context and history as canonical JSON beside the chart's
name, version and digest, and its armed timers when it ever armed one
(`runner.timers`); everything else is rebuilt from the chart.
"""

from __future__ import annotations

from typing import Any

from statekit.compiler.serialize import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.runner.errors import BUMP_VERSION, ChartVersionError, CorruptRowError
from statekit.runner.json_text import parse_json
from statekit.runner.store.rows import InstanceRow, StateColumns, positional
from statekit.runner.timers import timers_text


def state_columns(
    state: State, before: State | None = None, timers: str | None = None
) -> StateColumns:
    """The columns of `state` (a configuration's text is computed once); `before` and its
    `timers` text, when the caller built that text: see `timers_text`."""
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
        timers_text(state, before, timers),
    )


# The instance row's columns, built positionally (`rows.positional`): once per
# accepted event.
_columns = positional(StateColumns, "configuration", "context", "history", "timers")
_CONFIGURATIONS: dict[tuple[str, frozenset[int]], str] = {}


def state_of(chart: Chart, row: InstanceRow) -> State:
    """The state stored in `row`, which must run on `chart` (the chart of its own
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
        timers = loads(row.columns.timers, f"{where}: the stored timers")
        if not isinstance(timers, dict) or set(timers) != {"timer_generation", "timers"}:
            raise CorruptRowError(f"{where}: the stored timers are not an object of two keys")
        data.update(timers)
    try:
        return State.from_json(chart, data)
    except StateFormatError as exc:
        raise CorruptRowError(f"{where}: stored state does not fit its chart: {exc}") from exc


def loads(text: str, what: str) -> Any:
    """`json.loads` of a stored JSON text, with a CorruptRowError naming `what` instead
    of a ValueError."""
    if not isinstance(text, str):
        raise CorruptRowError(f"{what} is not a text but {type(text).__name__}")
    try:
        return parse_json(text)
    except ValueError as exc:
        raise CorruptRowError(f"{what} is not valid JSON: {exc}") from exc

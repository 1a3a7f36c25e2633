"""The runner's row formats: payload hashes, stored states and stored evidence.

Rows hold the minimum (STYLE 9): an instance row keeps its active
configuration (dotted paths), context and history as canonical JSON beside the
chart's name, version and digest; everything else is rebuilt from the chart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from statekit import __version__
from statekit.engine.chart import Chart
from statekit.engine.result import Microstep, Result
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.runner.errors import ChartVersionError, CorruptRowError
from statekit.runner.outcome import Conflict
from statekit.runner.store.rows import InstanceRow, StateColumns

ENGINE_VERSION = f"statekit-{__version__}/state-{STATE_FORMAT}"
"""Recorded with every snapshot: a snapshot made by another engine is not trusted."""


dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
"""`canonical_json` with one encoder made once (the hot path writes several texts per event)."""


def payload_sha256(event_type: str, payload: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON `[type, payload]`: equal events, equal hashes."""
    return payload_record(event_type, payload)[1]


def payload_record(event_type: str, payload: Mapping[str, Any]) -> tuple[str, str]:
    """The payload's canonical JSON and the sha256 of `[type, payload]` in that form."""
    text = dumps(payload)
    whole = f"[{dumps(event_type)},{text}]"  # == canonical_json([event_type, payload])
    return text, hashlib.sha256(whole.encode("utf-8")).hexdigest()


def text_sha256(text: str) -> str:
    """sha256 hex of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def state_columns(state: State) -> StateColumns:
    """The columns of `state` (a configuration's text is computed once)."""
    key = (state.chart_digest, state.active_ids)
    configuration = _CONFIGURATIONS.get(key)
    if configuration is None:
        if len(_CONFIGURATIONS) > 4096:
            _CONFIGURATIONS.clear()
        configuration = _CONFIGURATIONS[key] = dumps(state.to_data()["configuration"])
    history = state.history
    return StateColumns(
        configuration=configuration,
        context=dumps(dict(state.context)),
        history=dumps({k: list(v) for k, v in history.items()}) if history else "{}",
    )


_CONFIGURATIONS: dict[tuple[str, frozenset[int]], str] = {}


def state_of(chart: Chart, row: InstanceRow) -> State:
    """The state stored in `row`, expressed in `chart`.

    A row of the same digest loads as is. A row of an older version of the same
    chart is carried over to `chart` (`carry_over_data`: a ChartVersionError names
    the first stored state, active or remembered in the history, that `chart`
    no longer has). Another chart, a newer version, or the same version with
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
                f"{chart.digest}: unknown chart version (a changed chart needs a new version:)"
            )
    try:
        data = {
            "format": STATE_FORMAT,
            "statechart": chart.name,
            "version": chart.version,
            "digest": chart.digest,
            "configuration": json.loads(row.columns.configuration),
            "context": json.loads(row.columns.context),
            "history": json.loads(row.columns.history),
        }
    except ValueError as exc:
        raise CorruptRowError(f"{where}: stored state is not JSON: {exc}") from exc
    if row.chart_digest != chart.digest:
        return carry_over_data(chart, data, row.chart_version, where)
    try:
        return State.from_json(chart, data)
    except StateFormatError as exc:
        raise CorruptRowError(f"{where}: stored state does not fit its chart: {exc}") from exc


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


def microstep_data(step: Microstep) -> dict[str, Any]:
    """A microstep as JSON-ready data."""
    return {
        "event": step.event,
        "payload": dict(step.payload),
        "transitions": [
            {"id": t.id, "source": t.source, "targets": list(t.targets), "kind": t.kind}
            for t in step.transitions
        ],
        "exited": list(step.exited),
        "entered": list(step.entered),
        "changes": [[c.field, c.old, c.new] for c in step.changes],
        "emitted": list(step.emitted),
        "raised": list(step.raised),
    }


def evidence_json(result: Result, race: Conflict | None) -> str:
    """The evidence stored with an event: its microsteps, and the race it followed."""
    data: dict[str, Any] = {"microsteps": [microstep_data(s) for s in result.evidence]}
    if race is not None:
        data["race"] = race.to_data()
    return dumps(data)


def loads(text: str, what: str) -> Any:
    """`json.loads`, with a CorruptRowError naming `what` instead of a ValueError."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise CorruptRowError(f"{what} is not valid JSON: {exc}") from exc

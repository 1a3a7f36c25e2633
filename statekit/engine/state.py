"""The immutable state of one chart instance, and its canonical JSON form.

A `State` holds the minimum: the active configuration (an interned
`Configuration` shared by every state in it), the context, the recorded
history values and the armed timers with the arming counter
(`statekit.engine.timers`); the chart digest comes with the configuration. Publicly the
configuration is a frozenset of dotted paths with ancestors (the root
excluded), the context a read-only mapping, the history a mapping from
history-state path to recorded paths.

`to_json()` is canonical (sorted keys, no white space, paths in document
order) and lossless: `State.from_json(chart, state.to_json()) == state`.
`"timers"` and `"timer_generation"` are written only once a timer was armed
(the counter is non-zero), so a state of a chart without time is written
exactly as before time existed.
`from_json` checks everything against the chart and raises `StateFormatError`
naming what is wrong (an unknown path, an illegal configuration, a context
value of the wrong type, another chart's digest...).
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.compiler.ir import HistoryKind, StateKind
from statekit.engine.errors import EvaluationError
from statekit.engine.evidence import REDACTED
from statekit.engine.invariants import broken_invariant
from statekit.engine.state_timers import TimerFormatError, load_timers
from statekit.engine.tables import Configuration, Tables, TablesOwner
from statekit.engine.timers import NO_TIMERS, ArmedTimer, Timers
from statekit.engine.validation import PayloadError, check_context

STATE_FORMAT = 1
"""Version of the JSON form written by `State.to_json`."""


class StateFormatError(ValueError):
    """A serialised state that does not fit the chart it is loaded with."""


_NO_HISTORY: Mapping[str, tuple[str, ...]] = MappingProxyType({})


class State:
    """A chart instance's state (immutable: read-only properties, never mutated)."""

    __slots__ = ("_config", "_context", "_history", "_timers")

    def __init__(
        self,
        config: Configuration,
        context: Mapping[str, Any],
        history: Mapping[int, tuple[int, ...]],
        timers: Timers = NO_TIMERS,
    ) -> None:
        # Internal constructor: callers guarantee that nobody else holds `context`
        # or `history` mutably (the engine copies before writing).
        self._config = config
        self._context = context
        self._history = history
        self._timers = timers

    @property
    def configuration(self) -> frozenset[str]:
        """Active states as dotted paths, ancestors included (the root excluded)."""
        return self._config.paths

    @property
    def active_ids(self) -> frozenset[int]:
        """Active state ids (indexes into `chart.ir.states`)."""
        return self._config.ids

    @property
    def leaves(self) -> tuple[str, ...]:
        """The active atomic and final states, in document order."""
        states = self._config.tables.states
        return tuple(states[s].path for s in self._config.atomic)

    @property
    def context(self) -> Mapping[str, Any]:
        """The context, read-only."""
        return MappingProxyType(self._context)

    @property
    def history(self) -> Mapping[str, tuple[str, ...]]:
        """Recorded history: history-state path → recorded state paths (document order)."""
        if not self._history:  # most states (the runner reads it for every event it writes)
            return _NO_HISTORY
        states = self._config.tables.states
        return MappingProxyType(
            {
                states[h].path: tuple(states[s].path for s in value)
                for h, value in sorted(self._history.items())
            }
        )

    @property
    def timers(self) -> tuple[ArmedTimer, ...]:
        """The armed timers, in arming order (`statekit.engine.timers`)."""
        return self._timers.armed

    def timer(self, timer_id: str) -> ArmedTimer | None:
        """The armed timer with this id, or None."""
        return self._timers.find(timer_id)

    @property
    def timer_generation(self) -> int:
        """The arming counter: how many timers this instance has armed (0 at first)."""
        return self._timers.generation

    @property
    def chart_digest(self) -> str:
        """The digest of the chart this state belongs to."""
        return self._config.tables.digest

    @property
    def is_final(self) -> bool:
        """Whether the chart is final (it then accepts only what its final states classify)."""
        return self._config.final

    def is_active(self, path: str) -> bool:
        """Whether the state with this full dotted path is active."""
        return path in self._config.paths

    # ---- JSON ----------------------------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        """The JSON-ready form (see `to_json`)."""
        tables = self._config.tables
        states = tables.states
        data: dict[str, Any] = {
            "format": STATE_FORMAT,
            "statechart": tables.chart.name,
            "version": tables.chart.version,
            "digest": tables.digest,
            "configuration": [states[s].path for s in self._config.ordered],
            "context": dict(self._context),
            "history": {
                states[h].path: [states[s].path for s in value]
                for h, value in self._history.items()
            },
        }
        timers = self._timers
        if timers.generation:
            data["timers"] = [t.to_data() for t in timers.armed]
            data["timer_generation"] = timers.generation
        return data

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys, no white space); `from_json` reads it back."""
        return canonical_json(self.to_data())

    @classmethod
    def from_json(cls, chart: TablesOwner | Tables, data: str | bytes | Mapping[str, Any]) -> State:
        """Load a state written by `to_json` (or its `to_data` form) for `chart`.

        Anything that is not such a state raises `StateFormatError`, whatever its
        shape: JSON nested too deeply to decode (or a nested value where a
        state has none) included.
        """
        tables = chart if isinstance(chart, Tables) else chart.tables
        try:
            if isinstance(data, str | bytes):
                try:
                    data = json.loads(data)
                except ValueError as exc:
                    raise StateFormatError(f"not JSON: {_shown(str(exc))}") from None
            if not isinstance(data, Mapping):
                raise StateFormatError(f"a state is a JSON object, not {_shown(data)}")
            return _load(tables, data)
        except RecursionError:
            # The decoder (or a check) met nesting deeper than the interpreter's stack;
            # a state has at most two levels (`history` lists), so it is not a state.
            raise StateFormatError("not a state: the JSON is nested too deeply") from None

    # ---- values --------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (
            self._config.ids == other._config.ids
            and self._config.tables.digest == other._config.tables.digest
            and self._context == other._context
            and self._history == other._history
            and self._timers.same(other._timers)
        )

    def __hash__(self) -> int:
        return hash(
            (
                self._config.tables.digest,
                self._config.ids,
                frozenset([(k, _hashable(v)) for k, v in self._context.items()]),
                frozenset(self._history.items()),
                self._timers.armed,
            )
        )

    def __repr__(self) -> str:
        secret = self._config.tables.secret_context
        context = {k: REDACTED if k in secret else v for k, v in self._context.items()}
        return f"State({list(self.leaves)!r}, context={context!r})"


def _hashable(value: Any) -> Any:
    """A context value as a hash key: a list (a `list` field's value) as a tuple."""
    if value.__class__ is list:
        return tuple([_hashable(v) for v in value])
    return value


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict = 2, 60, 60, 4, 4


def _shown(value: object) -> str:
    """A short repr of a value read from outside, for messages (bounded for any value)."""
    return _SHOWN.repr(value)


_KEYS = {"format", "statechart", "version", "digest", "configuration", "context", "history"}
_TIMER_KEYS = {"timers", "timer_generation"}


def _load(tables: Tables, data: Mapping[str, Any]) -> State:
    keys = set(data)
    if keys != _KEYS and keys != _KEYS | _TIMER_KEYS:
        expected = _KEYS | _TIMER_KEYS if keys & _TIMER_KEYS else _KEYS
        missing, extra = sorted(expected - keys), sorted(map(str, keys - expected))
        raise StateFormatError(f"state keys: missing {missing}, unknown {_shown(extra)}")
    if data["format"] != STATE_FORMAT or type(data["format"]) is not int:
        shown = _shown(data["format"])
        raise StateFormatError(f"unknown state format {shown} (expected {STATE_FORMAT})")
    chart = tables.chart
    if (data["digest"], data["statechart"], data["version"]) != (
        tables.digest,
        chart.name,
        chart.version,
    ) or type(data["version"]) is not int:
        raise StateFormatError(
            f"the state was made with chart {_shown(data['statechart'])} version "
            f"{_shown(data['version'])} ({_shown(data['digest'])}), not with this chart "
            f"{chart.name!r} version {chart.version} ({tables.digest})"
        )
    ids = frozenset(_path_ids(tables, data["configuration"], "configuration"))
    problem = _configuration_problem(tables, ids)
    if problem:
        raise StateFormatError(f"illegal configuration: {problem}")
    try:
        context = check_context(chart.context, data["context"], complete=True)
    except PayloadError as exc:
        raise StateFormatError(str(exc)) from exc
    history = _history(tables, data["history"])
    config = tables.configuration(ids)
    try:
        broken = broken_invariant(tables, config, context)
    except EvaluationError as exc:
        raise StateFormatError(f"cannot check the invariants: {exc}") from exc
    if broken is not None:
        raise StateFormatError(f"invariant '{broken}' does not hold in this state")
    timers = NO_TIMERS
    if "timers" in data:
        try:
            timers = load_timers(tables, config, data["timers"], data["timer_generation"])
        except TimerFormatError as exc:
            raise StateFormatError(str(exc)) from None
    return State(config, context, history, timers)


def _path_ids(tables: Tables, paths: object, where: str) -> list[int]:
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise StateFormatError(f"{where}: expected a list of state paths")
    out: list[int] = []
    for path in paths:
        sid = tables.chart.path_index.get(path)
        if sid is None or sid == 0:
            shown = _shown(path)
            raise StateFormatError(f"{where}: chart {tables.chart.name!r} has no state {shown}")
        out.append(sid)
    return out


def _configuration_problem(tables: Tables, ids: frozenset[int]) -> str | None:
    """Why `ids` is not a legal configuration (or None): closed under ancestors, one
    active child per compound state, every region of a parallel state."""
    states = tables.states
    for sid in sorted(ids):
        node = states[sid]
        if node.kind is StateKind.HISTORY:
            return f"{node.path!r} is a history pseudo-state"
        if node.parent not in ids and node.parent != 0:
            return (
                f"{node.path!r} is active but its parent {states[node.parent or 0].path!r} is not"
            )
    for sid in sorted({0, *ids}):
        node = states[sid]
        active = [c for c in node.children if c in ids]
        name = node.path or "the root"
        if node.kind is StateKind.COMPOUND and len(active) != 1:
            return f"{name!r} needs exactly one active child, has {len(active)}"
        if node.kind is StateKind.PARALLEL and len(active) != len(node.children):
            return f"every region of {name!r} must be active"
    return None


def _history(tables: Tables, data: object) -> dict[int, tuple[int, ...]]:
    if not isinstance(data, Mapping):
        raise StateFormatError("history: expected an object")
    states = tables.states
    out: dict[int, tuple[int, ...]] = {}
    for path, value in data.items():
        hid = tables.chart.path_index.get(path) if isinstance(path, str) else None
        if hid is None or states[hid].kind is not StateKind.HISTORY:
            raise StateFormatError(f"history: chart has no history state {_shown(path)}")
        node = states[hid]
        parent = states[node.parent or 0]
        recorded = sorted(set(_path_ids(tables, value, f"history of {_shown(path)}")))
        for sid in recorded:
            ok = (
                parent.contains(sid) and states[sid].is_atomic
                if node.history is HistoryKind.DEEP
                else states[sid].parent == parent.id
            )
            if not ok or states[sid].kind is StateKind.HISTORY:
                raise StateFormatError(
                    f"history of {path!r}: {states[sid].path!r} cannot be recorded there"
                )
        if not recorded:
            raise StateFormatError(f"history of {path!r}: empty")
        out[hid] = tuple(recorded)
    return out

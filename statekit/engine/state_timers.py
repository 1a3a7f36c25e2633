"""Reading a state's armed timers back from JSON, checked against the chart.

`State.from_json` calls `load_timers` for the `"timers"` and
`"timer_generation"` entries; anything that does not fit (an unknown timer,
an `after` timer whose state is not active, a wrong type, generations out of
order...) is a `TimerFormatError` naming the entry, which the state reports
as a `StateFormatError`.
"""

from __future__ import annotations

import reprlib
import weakref
from collections.abc import Mapping
from types import MappingProxyType

from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.ir import CompiledChart, Effect, Send, TimerKind
from statekit.engine.tables import Configuration, Tables
from statekit.engine.timers import INDEXED, TIMER_MS_MAX, TIMER_MS_MIN, ArmedTimer, Timers
from statekit.engine.validation import EMPTY, INT_MAX, PayloadError

_KEYS = frozenset({"id", "event", "payload", "delay_ms", "due_ms", "generation", "owner"})
_PAUSED_KEYS = _KEYS | {"paused_ms"}  # a paused timer's (a running one has no `paused_ms`)
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict = 2, 60, 60, 4, 4
_SEND_IDS: weakref.WeakKeyDictionary[Tables, frozenset[str]] = weakref.WeakKeyDictionary()


class TimerFormatError(ValueError):
    """A stored timer entry that does not fit the chart or the state."""


def load_timers(tables: Tables, config: Configuration, data: object, generation: object) -> Timers:
    """The `Timers` of a serialised state (see the module docstring)."""
    if not _is_int(generation) or not 1 <= generation <= INT_MAX:  # type: ignore[operator]
        raise TimerFormatError(
            f"timer_generation: expected a positive integer, not {_SHOWN.repr(generation)}"
        )
    assert isinstance(generation, int)
    if not isinstance(data, list):
        raise TimerFormatError(f"timers: expected a list, not {_SHOWN.repr(data)}")
    armed: list[ArmedTimer] = []
    ids: set[str] = set()
    last = 0
    for index, entry in enumerate(data):
        timer = _timer(tables, config, entry, f"timers[{index}]")
        if timer.id in ids:
            raise TimerFormatError(f"timers[{index}]: {timer.id!r} is armed twice")
        if not last < timer.generation <= generation:
            raise TimerFormatError(
                f"timers[{index}]: generation {timer.generation} is not after {last} "
                f"and at most timer_generation {generation} (timers are in arming order)"
            )
        ids.add(timer.id)
        last = timer.generation
        armed.append(timer)
    by_id = {t.id: t for t in armed} if len(armed) >= INDEXED else None
    return Timers(tuple(armed), generation, by_id)


def _timer(tables: Tables, config: Configuration, entry: object, where: str) -> ArmedTimer:
    if not isinstance(entry, Mapping) or (
        (keys := set(entry) - {"to"}) != _KEYS and keys != _PAUSED_KEYS
    ):
        raise TimerFormatError(
            f"{where}: expected an object with keys {sorted(_KEYS)} (and 'paused_ms' if "
            "paused, 'to' if sent to the parent or a child)"
        )
    to = entry.get("to")
    if "to" in entry and (not isinstance(to, str) or entry["owner"] is not None):
        raise TimerFormatError(f"{where}: 'to' is the receiver of a delayed send: a string")
    timer_id, event, owner = entry["id"], entry["event"], entry["owner"]
    paused = entry.get("paused_ms")
    if "paused_ms" in entry and not (_is_int(paused) and TIMER_MS_MIN <= paused <= TIMER_MS_MAX):  # type: ignore[operator]
        raise TimerFormatError(f"{where}: paused_ms must be an integer within ±(2^63 - 1)")
    if paused is not None and entry["due_ms"] is not None:
        raise TimerFormatError(f"{where}: a paused timer has no due time")
    delay, due, generation, payload = (
        entry["delay_ms"],
        entry["due_ms"],
        entry["generation"],
        entry["payload"],
    )
    if not isinstance(timer_id, str) or not isinstance(event, str):
        raise TimerFormatError(f"{where}: id and event must be strings")
    for name, value in (("delay_ms", delay), ("due_ms", due)):
        if value is not None and not (_is_int(value) and TIMER_MS_MIN <= value <= TIMER_MS_MAX):
            raise TimerFormatError(f"{where}: {name} must be null or an integer within ±(2^63 - 1)")
    if not _is_int(generation):
        raise TimerFormatError(f"{where}: generation must be an integer")
    if not isinstance(payload, Mapping):
        raise TimerFormatError(f"{where}: payload must be an object")
    chart = tables.chart
    decl = chart.timer(timer_id)
    if owner is not None:
        if decl is None:
            shown = _SHOWN.repr(timer_id)
            raise TimerFormatError(f"{where}: chart {chart.name!r} has no timer {shown}")
        path = tables.states[decl.state].path
        if owner != path or event != timer_id or payload:
            raise TimerFormatError(
                f"{where}: timer {timer_id!r} is owned by {path!r}, delivers itself, no payload"
            )
        if decl.state and decl.state not in config.ids:
            raise TimerFormatError(f"{where}: {timer_id!r} is armed but {path!r} is not active")
        if (decl.kind is TimerKind.AT) != (delay is None):
            raise TimerFormatError(f"{where}: {timer_id!r} has the wrong kind of delay")
        if decl.kind is TimerKind.AT and due is None and paused is None:
            raise TimerFormatError(f"{where}: {timer_id!r} needs its due time")
        if decl.kind is TimerKind.AFTER and delay != decl.delay_ms:
            raise TimerFormatError(f"{where}: {timer_id!r} is armed with {decl.delay_ms} ms")
        return ArmedTimer(timer_id, event, EMPTY, delay, due, generation, owner, paused)
    validator = tables.validators.get(event)
    if validator is None and to is None:  # (a message's event is the receiver's)
        raise TimerFormatError(f"{where}: event {_SHOWN.repr(event)} is not declared")
    if decl is not None or not _is_send_id(tables, timer_id, event, generation):
        raise TimerFormatError(
            f"{where}: no send of {event!r} in the chart arms id {_SHOWN.repr(timer_id)}"
        )
    if delay is None and due is None and paused is None:
        raise TimerFormatError(f"{where}: a sent timer needs a delay or a due time")
    if validator is None:
        body = MappingProxyType(dict(payload))
    else:
        try:
            clean = validator(payload)
        except PayloadError as exc:
            raise TimerFormatError(f"{where}: {exc}") from None
        body = MappingProxyType(dict(clean))
    return ArmedTimer(timer_id, event, body, delay, due, generation, None, paused, to)


def _is_int(value: object) -> bool:
    return value.__class__ is int


def _is_send_id(tables: Tables, timer_id: str, event: str, generation: int) -> bool:
    """Whether a delayed `send` of `event` in the chart arms `timer_id`."""
    if timer_id == f"send({event})#{generation}":
        return True
    ids = _SEND_IDS.get(tables)
    if ids is None:
        ids = _SEND_IDS[tables] = send_ids(tables.chart)
    return f"{event}\0{timer_id}" in ids


def send_ids(chart: CompiledChart) -> frozenset[str]:
    """`event\\0id` for each `send` with an `id:` in the chart (its states' entry and exit
    effects and its transitions' effects)."""
    effects: list[Effect] = []
    for state in chart.states:
        effects.extend(state.entry)
        effects.extend(state.exit)
    for transition in chart.transitions:
        effects.extend(transition.effects)
    return frozenset(
        f"{e.event}\0{e.id}"
        for e in leaf_effects(effects)
        if isinstance(e, Send) and e.id is not None
    )

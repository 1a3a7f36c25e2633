"""The flat chart with data on every transition, and its hand-written reducer.

`GUARDED_CHART` is bench/engine_core.py's flat 6-state chart where every event
carries a payload (`n: integer`), every transition has a named guard reading
the context and the payload, and an `assign` that adds the payload to a
counter: the memo of data-free macrosteps cannot answer any of it, so
`Chart.send` takes its general path on every event.

`guarded_reducer` is the same chart written by hand, the limit for pure
Python: it checks the payload exactly as the chart declares it (a mapping with
exactly the field `n`, an integer that is not a boolean and fits in 64 bits),
evaluates the guard, assigns, and returns an immutable outcome (status, reason,
leaf, context). It keeps no evidence and builds no `State`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from bench._streams import FLAT_CYCLE, Stream
from statekit.engine.chart import Chart

GUARDED_CHART = """
statechart: flat_guarded
description: The flat media loader with a payload, a data guard and an assign on every transition.
context:
  count: {type: integer, default: 0}
  limit: {type: integer, default: 1000000000}
events:
  LOAD: {n: {type: integer}}
  LOADED: {n: {type: integer}}
  PLAY: {n: {type: integer}}
  PAUSE: {n: {type: integer}}
  RESUME: {n: {type: integer}}
  STOP: {n: {type: integer}}
  RESET: {n: {type: integer}}
guards:
  within_limit:
    if: event.n > 0 and ctx.count + event.n <= ctx.limit
    else: OVER_LIMIT
initial: idle
states:
  idle:
    on: {LOAD: {to: loading, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}}
  loading:
    on:
      LOADED: {to: ready, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
      STOP: {to: stopped, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
  ready:
    on:
      PLAY: {to: playing, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
      STOP: {to: stopped, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
  playing:
    on:
      PAUSE: {to: paused, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
      STOP: {to: stopped, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
  paused:
    on:
      RESUME: {to: playing, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
      STOP: {to: stopped, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}
  stopped:
    on: {RESET: {to: idle, guard: within_limit, do: [{assign: {count: ctx.count + event.n}}]}}
"""

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
_TARGETS = {
    ("idle", "LOAD"): "loading",
    ("loading", "LOADED"): "ready",
    ("loading", "STOP"): "stopped",
    ("ready", "PLAY"): "playing",
    ("ready", "STOP"): "stopped",
    ("playing", "PAUSE"): "paused",
    ("playing", "STOP"): "stopped",
    ("paused", "RESUME"): "playing",
    ("paused", "STOP"): "stopped",
    ("stopped", "RESET"): "idle",
}


class FlatState(NamedTuple):
    """The reducer's state: the active leaf and the context (read-only)."""

    leaf: str
    context: Mapping[str, Any]


class FlatOutcome(NamedTuple):
    """What the reducer returns for one event."""

    status: str
    reason: str | None
    state: FlatState


INITIAL = FlatState("idle", MappingProxyType({"count": 0, "limit": 1_000_000_000}))


def guarded_reducer(state: FlatState, event: str, payload: Any) -> FlatOutcome:
    """One event through the guarded flat chart, by hand."""
    if event not in FLAT_CYCLE:
        return FlatOutcome("REJECTED", "UNKNOWN_EVENT", state)
    if not isinstance(payload, Mapping) or len(payload) != 1 or "n" not in payload:
        return FlatOutcome("REJECTED", "INVALID_PAYLOAD", state)
    n = payload["n"]
    if n.__class__ is not int or not _INT_MIN <= n <= _INT_MAX:
        return FlatOutcome("REJECTED", "INVALID_PAYLOAD", state)
    target = _TARGETS.get((state.leaf, event))
    if target is None:
        return FlatOutcome("REJECTED", "UNDEFINED_TRANSITION", state)
    ctx = state.context
    count = ctx["count"]
    if not (n > 0 and count + n <= ctx["limit"]):
        return FlatOutcome("REJECTED", "OVER_LIMIT", state)
    count += n
    if not _INT_MIN <= count <= _INT_MAX:
        return FlatOutcome("REJECTED", "EVALUATION_ERROR", state)
    new = dict(ctx)
    new["count"] = count
    return FlatOutcome("APPLIED", None, FlatState(target, MappingProxyType(new)))


def guarded_stream(cycles: int = 2000) -> Stream:
    """The flat cycle with a payload that varies per event (every event applies)."""
    return [
        (event, {"n": 1 + (i * 7 + j) % 5}, f"e{i * 7 + j}")
        for i in range(cycles)
        for j, event in enumerate(FLAT_CYCLE)
    ]


def mixed_stream() -> Stream:
    """Events for the agreement check that also reject: every rule of the reducer."""
    out: list[tuple[str, Mapping[str, Any] | None, str]] = []
    payloads: list[Any] = [
        {"n": 1},
        {"n": 3},
        {"n": 0},
        {"n": -2},
        {"n": True},
        {"n": 1.0},
        {"n": 2**63},
        {"n": 10**9},
        {},
        {"n": 1, "m": 2},
        None,
        "n",
    ]
    events = (*FLAT_CYCLE, "NOPE")
    k = 0
    for round_ in range(6):
        for event in events:
            for p in payloads[: 2 + round_ * 2]:
                out.append((event, p, f"m{k}"))
                k += 1
    return out


def agree(chart: Chart, stream: Stream) -> None:
    """The reducer and `chart.send` agree on every event: status, reason, active leaf
    and context (the chart emits nothing)."""
    state, mine = chart.start(), INITIAL
    for i, (event, payload, event_id) in enumerate(stream):
        result = chart.send(state, event, payload, event_id=event_id)
        out = guarded_reducer(mine, event, payload)
        where = f"flat guarded reducer, event {i} ({event} {payload!r})"
        assert (out.status, out.reason) == (result.status.value, result.reason), where
        assert (out.state.leaf,) == result.state.leaves, where
        assert dict(out.state.context) == dict(result.state.context), where
        assert not result.emitted, where
        state, mine = result.state, out.state


def reducer_rate(stream: Stream) -> float:
    """Events/s of `guarded_reducer` over `stream`."""
    state = INITIAL
    reduce = guarded_reducer
    began = time.process_time()
    for event, payload, _event_id in stream:
        state = reduce(state, event, payload).state
    return len(stream) / (time.process_time() - began)

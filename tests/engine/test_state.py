"""State: immutable, interned configurations, canonical lossless JSON, strict loading."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chart_helpers import machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import statekit
from statekit.engine.state import State, StateFormatError

MACHINES = Path(__file__).resolve().parents[2] / "machines"

HISTORY = """
statechart: hist
context:
  note: {type: string, nullable: true, default: null}
  ratio: {type: number, default: 0.5}
events: {NEXT: {}, OUT: {}, BACK: {}, NOTE: {text: string}}
initial: m
states:
  m:
    initial: p
    on: {OUT: away, NOTE: {do: [{assign: {note: event.text, ratio: ctx.ratio / 3}}]}}
    states:
      h: {history: deep}
      s: {history: shallow}
      p:
        initial: p1
        states:
          p1: {on: {NEXT: p2}}
          p2: {}
  away:
    on: {BACK: m.h}
"""


def walk(chart: statekit.Chart, *events: tuple[str, dict[str, Any] | None]) -> State:
    state = chart.start()
    for event, payload in events:
        state = chart.send(state, event, payload).state
    return state


def test_public_view_of_a_state() -> None:
    chart = machine(HISTORY)
    state = walk(chart, ("NEXT", None), ("NOTE", {"text": "é ✓"}), ("OUT", None))
    assert state.configuration == {"away"}
    assert state.leaves == ("away",)
    assert state.history == {"m.h": ("m.p.p2",), "m.s": ("m.p",)}
    assert state.context == {"note": "é ✓", "ratio": 0.5 / 3}
    assert state.chart_digest == chart.digest
    assert state.is_active("away") and not state.is_active("m")
    assert not state.is_final


def test_states_are_immutable() -> None:
    state = machine(HISTORY).start()
    with pytest.raises(AttributeError):
        state.configuration = frozenset()  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.context["note"] = "x"  # type: ignore[index]
    with pytest.raises(AttributeError):
        state.extra = 1  # type: ignore[attr-defined]


def test_states_in_one_configuration_share_it() -> None:
    chart = machine(HISTORY)
    a = walk(chart, ("NOTE", {"text": "a"}))
    b = walk(chart, ("NOTE", {"text": "b"}))
    assert a.configuration is b.configuration  # one interned configuration object
    assert a != b and hash(walk(chart, ("NOTE", {"text": "a"}))) == hash(a)


def test_json_is_canonical_and_round_trips() -> None:
    chart = machine(HISTORY)
    state = walk(chart, ("NEXT", None), ("NOTE", {"text": "é ✓"}), ("OUT", None))
    text = state.to_json()
    assert (
        json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        == text
    )
    data = json.loads(text)
    assert data["configuration"] == ["away"]
    assert data["history"] == {"m.h": ["m.p.p2"], "m.s": ["m.p"]}
    assert data["digest"] == chart.digest and data["statechart"] == "hist"
    loaded = State.from_json(chart, text)
    assert loaded == state and loaded.to_json() == text
    assert loaded.context["ratio"] == 0.5 / 3  # floats survive exactly
    assert State.from_json(chart, text.encode()) == state
    assert chart.state_from_json(data) == state
    back = chart.send(loaded, "BACK").state
    assert back.configuration == {"m", "m.p", "m.p.p2"}


@pytest.mark.parametrize("name", ["task", "payment", "media_player"])
def test_reference_machine_states_round_trip(name: str) -> None:
    chart = statekit.load(MACHINES / f"{name}.yaml")
    state = chart.start()
    assert State.from_json(chart, state.to_json()) == state


def broken(chart: statekit.Chart, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(chart.start().to_json())
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"configuration": ["m", "m.p", "m.p.p9"]}, "chart 'hist' has no state 'm.p.p9'"),
        ({"configuration": ["m", "m.p"]}, "'m.p' needs exactly one active child, has 0"),
        ({"configuration": ["m.p", "m.p.p1"]}, "its parent 'm' is not"),
        ({"configuration": ["m", "m.p", "m.p.p1", "away"]}, "'the root' needs exactly one"),
        ({"configuration": ["m", "m.h"]}, "history pseudo-state"),
        ({"digest": "sha256:00"}, "not with this chart 'hist'"),
        ({"context": {"note": None}}, "missing context field 'ratio'"),
        (
            {"context": {"note": 1, "ratio": 0.5}},
            "field 'note': expected string or null, got integer",
        ),
        ({"context": {"note": None, "ratio": 0.5, "x": 1}}, "unknown context field(s) 'x'"),
        ({"history": {"m.p": ["m.p.p1"]}}, "no history state 'm.p'"),
        ({"history": {"m.h": ["m.p"]}}, "'m.p' cannot be recorded there"),
        ({"history": {"m.s": ["m.p.p1"]}}, "'m.p.p1' cannot be recorded there"),
        ({"format": 2}, "unknown state format"),
        ({"extra": 1}, "unknown ['extra']"),
    ],
)
def test_loading_a_state_that_does_not_fit_the_chart_says_why(
    changes: dict[str, Any], needle: str
) -> None:
    chart = machine(HISTORY)
    with pytest.raises(StateFormatError) as caught:
        State.from_json(chart, broken(chart, **changes))
    assert needle in str(caught.value)


def test_loading_a_state_that_breaks_an_invariant_is_refused() -> None:
    chart = machine(
        """
        statechart: inv
        context: {n: integer}
        events: {GO: {}}
        initial: a
        states: {a: {}}
        invariants: {small: {assert: ctx.n < 3}}
        """
    )
    with pytest.raises(StateFormatError, match="invariant 'small'"):
        State.from_json(chart, broken(chart, context={"n": 5}))


def test_loading_garbage_is_a_state_format_error() -> None:
    chart = machine(HISTORY)
    with pytest.raises(StateFormatError, match="not JSON"):
        State.from_json(chart, "{")
    with pytest.raises(StateFormatError, match="JSON object"):
        State.from_json(chart, "[]")


_STATE_MEMORY_PROBE = """
import gc, json, sys, tracemalloc
import statekit
chart = statekit.load(sys.argv[1])
s0 = chart.start()
payload = {"attempt": 1, "worker_id": "w", "lease_until_ms": 1}
chart.send(s0, "TaskStarted", payload)  # warm the caches
count = 2000
states = [None] * count
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
for i in range(count):
    worker = f"worker-{i:06d}"  # each state keeps its own strings and numbers
    lease = 1_700_000_000_000 + i
    payload = {"attempt": 1, "worker_id": worker, "lease_until_ms": lease}
    states[i] = chart.send(s0, "TaskStarted", payload).state
del payload, worker
gc.collect()
per_state = (tracemalloc.get_traced_memory()[0] - base) / count
tracemalloc.stop()
shared = len({id(s.configuration) for s in states})
print(json.dumps([per_state, shared]))
"""


def test_a_live_task_state_takes_less_than_a_kibibyte() -> None:
    # Measured in a fresh interpreter: in this one, an observer another test or the
    # coverage plugin installed keeps its own record of every step, and whether one of
    # its dictionaries grows during the measurement decided the figure (1,040 bytes in
    # one full run, 999 in another, 867 alone).
    done = subprocess.run(
        [sys.executable, "-c", _STATE_MEMORY_PROBE, str(MACHINES / "task.yaml")],
        capture_output=True,
        text=True,
        check=True,
    )
    per_state, shared = json.loads(done.stdout)
    assert per_state < 1024, per_state
    assert shared == 1  # every state shares its configuration


# -- hostile shapes: whatever the nesting, `StateFormatError` and nothing else --------------

_KINDS = st.sampled_from(["list", "object"])
_PLACES = st.sampled_from(
    [None, "format", "statechart", "version", "digest", "configuration", "context", "history"]
)


def _nested_text(kinds: list[str], depth: int, leaf: str) -> str:
    """JSON text nested `depth` levels, cycling through `kinds` (built without recursion)."""
    opening = {"list": "[", "object": '{"k":'}
    closing = {"list": "]", "object": "}"}
    shape = [kinds[i % len(kinds)] for i in range(depth)]
    return "".join(opening[k] for k in shape) + leaf + "".join(closing[k] for k in reversed(shape))


def _nested_value(kinds: list[str], depth: int, leaf: object) -> object:
    value = leaf
    for i in reversed(range(depth)):
        value = [value] if kinds[i % len(kinds)] == "list" else {"k": value}
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(_KINDS, min_size=1, max_size=4),
    depth=st.one_of(st.integers(1, 50), st.integers(900, 1100), st.integers(50_000, 200_000)),
    place=_PLACES,
    as_text=st.booleans(),
    leaf=st.sampled_from(["1", '"x"', "null", "[]", "{}"]),
)
def test_from_json_refuses_any_nesting_with_state_format_error(
    kinds: list[str], depth: int, place: str | None, as_text: bool, leaf: str
) -> None:
    chart = machine(HISTORY)
    good = chart.start().to_data()
    if as_text:
        inner = _nested_text(kinds, depth, leaf)
        if place is None:
            text = inner
        else:
            fields = {k: json.dumps(v) for k, v in good.items()}
            if place == "context":
                fields[place] = '{"note": ' + inner + ', "ratio": 0.5}'
            else:
                fields[place] = inner
            text = "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in fields.items()) + "}"
        data: str | dict[str, Any] = text
    else:
        nested = _nested_value(kinds, depth, json.loads(leaf))
        if place is None:
            data = {"format": 1, "nested": nested}
        else:
            data = dict(good)
            data[place] = {"note": nested, "ratio": 0.5} if place == "context" else nested
    with pytest.raises(StateFormatError) as raised:
        State.from_json(chart, data)
    assert len(str(raised.value)) < 2000
    with pytest.raises(StateFormatError):
        chart.state_from_json(data)

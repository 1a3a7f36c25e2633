"""Properties over random event streams drawn from each reference chart's declarations.

- replaying the accepted events gives the live state again;
- a rejected event changes nothing and emits nothing;
- `send` never mutates its inputs, and the same inputs give an equal result;
- every state reached survives a JSON round trip.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import statekit
from statekit.compiler.ir import CompiledChart, FieldDecl, StateKind
from statekit.compiler.pipeline import compile_source
from statekit.compiler.value_types import BaseType
from statekit.engine.replay import Event
from statekit.engine.result import Status
from statekit.engine.state import State
from statekit.engine.step import step

MACHINES = Path(__file__).resolve().parents[2] / "machines"
CHARTS = {
    name: statekit.load(MACHINES / f"{name}.yaml") for name in ("task", "payment", "media_player")
}
EFFECTS = """
statechart: effects
description: >-
  Every kind of one-microstep macrostep and its neighbours: assigns that overflow or
  divide by zero, emits that fail, secret payload and context fields, a history state
  recorded on exit, parallel regions moving together, targetless and self
  transitions, an invariant that can break, and a raise, a done event and an
  eventless transition (which need the general loop).
context:
  count: {type: integer, default: 1}
  pin: {type: string, secret: true, default: ""}
  log: {type: integer, default: 0}
events:
  ADD: {n: {type: integer}, key: {type: string, secret: true}}
  MUL: {n: {type: integer}}
  DIV: {n: {type: integer}}
  AWAY: {}
  BACK: {}
  POKE: {n: {type: integer}}
  FINISH: {}
  TICK: {}
guards:
  small: {if: "event.n < 1000", else: TOO_BIG}
invariants:
  bounded: {assert: "ctx.count < 1000000000000000000"}
initial: work
states:
  work:
    parallel: true
    on:
      AWAY: {to: away, do: [{assign: {log: "(ctx.log * 31 + 1) % 1000003"}}]}
    states:
      left:
        initial: a
        states:
          a:
            on:
              ADD:
                to: left.b
                guard: small
                do: [{assign: {count: ctx.count + event.n, pin: event.key}}]
              MUL:
                to: left.a
                do:
                  - assign: {count: ctx.count * event.n}
                  - emit: {type: Grew, payload: {by: event.n}}
          b:
            on:
              ADD: {guard: small, do: [{assign: {count: ctx.count + event.n}}]}
              DIV: {to: left.a, do: [{emit: {type: Divided, payload: {q: ctx.count // event.n}}}]}
              FINISH: left.done
          done: {final: true}
          last: {history: shallow}
      right:
        initial: x
        states:
          x:
            on:
              ADD: {to: right.y, do: [{assign: {log: "(ctx.log * 31 + 2) % 1000003"}}]}
              POKE: {to: right.y, do: [{raise: {event: TICK}}]}
          y:
            always: {to: right.x, if: "ctx.count > 50", do: [{assign: {count: 0}}]}
            on:
              TICK: {do: [{assign: {log: "(ctx.log * 31 + 3) % 1000003"}}]}
              MUL: {to: right.x}
              FINISH: right.z
          z: {final: true}
          deep: {history: deep}
  away:
    on:
      BACK: [{to: work.left.last, if: "ctx.count % 2 == 0"}, {to: work.right.deep}]
"""
ONE_MICROSTEP_CHARTS = {
    **CHARTS,
    "effects": statekit.Chart(compile_source(EFFECTS, "effects.yaml").chart),  # type: ignore[arg-type]
}


def values(decl: FieldDecl, context: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Mostly valid values of a declared type, from small pools and from the context
    (and context integers + 1), so that guards both pass and fail."""
    t = decl.type
    if t.enum is not None:
        base: st.SearchStrategy[Any] = st.sampled_from(t.enum)
    elif t.base in (BaseType.INTEGER, BaseType.NUMBER):
        ints = [v for v in context.values() if type(v) is int]
        pool = sorted({-1, 0, 1, 2, 50, 100, *ints, *(v + 1 for v in ints)})
        base = st.sampled_from(pool)
        if t.base is BaseType.NUMBER:
            base = base | st.sampled_from([2.5, -1.0])
    elif t.base is BaseType.STRING:
        strings = [v for v in context.values() if type(v) is str]
        base = st.sampled_from(sorted({"abc", "w-1", "", *strings}))
    else:
        base = st.booleans()
    return (base | st.none()) if t.nullable else base


def payloads(
    chart: CompiledChart, event: str, context: Mapping[str, Any]
) -> st.SearchStrategy[dict[str, Any] | None]:
    fields = chart.events[event].fields
    if not fields:
        return st.none() | st.just({})
    valid = st.fixed_dictionaries(
        {f.name: values(f, context) for f in fields if not f.has_default},
        optional={f.name: values(f, context) for f in fields if f.has_default},
    )
    return valid


def draw_event(
    data: st.DataObject, chart: statekit.Chart, state: State
) -> tuple[str, dict[str, Any] | None]:
    """Usually an event some active state has a transition for, preferring those that do
    not end the chart (final states absorb a stream); sometimes any event."""
    ir = chart.ir
    handled: dict[str, bool] = {}  # event -> whether a candidate enters a final state
    for s in state.active_ids:
        for event, tids in ir.candidates[s].items():
            if event in ir.events:  # not done.state.* nor a timer event (delivered by time)
                ends = any(
                    ir.states[t].kind is StateKind.FINAL
                    for tid in tids
                    for t in ir.transitions[tid].targets
                )
                handled[event] = handled.get(event, False) or ends
    lasting = sorted(e for e, ends in handled.items() if not ends)
    anything = [*sorted(ir.events), "UNDECLARED"]
    choice = data.draw(st.integers(0, 9))
    pool = (
        lasting
        if lasting and choice < 6
        else sorted(handled)
        if handled and choice < 9
        else anything
    )
    event = data.draw(st.sampled_from(pool))
    if event == "UNDECLARED":
        return event, None
    if data.draw(st.integers(0, 9)) == 0:  # now and then an invalid payload
        fields = ir.events[event].fields
        return event, {fields[0].name: True} if fields else {"?": 1}
    return event, data.draw(payloads(ir, event, state.context))


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_replaying_the_accepted_events_gives_the_live_state(name: str) -> None:
    chart = CHARTS[name]

    @SETTINGS
    @given(st.data(), st.integers(min_value=1, max_value=30))
    def check(data: st.DataObject, length: int) -> None:
        live = chart.start()
        accepted: list[Event] = []
        for i in range(length):
            event, payload = draw_event(data, chart, live)
            result = chart.send(live, event, payload, event_id=f"e{i}")
            if result.status is not Status.REJECTED:
                accepted.append(Event(event, payload, f"e{i}"))
            live = result.state
        replayed = chart.replay(accepted)
        assert replayed.ok and replayed.applied == len(accepted)
        assert replayed.state == live
        assert replayed.state.to_json() == live.to_json()

    check()


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_send_is_pure_and_rejections_change_nothing(name: str) -> None:
    chart = CHARTS[name]

    @SETTINGS
    @given(st.data(), st.integers(min_value=1, max_value=30))
    def check(data: st.DataObject, length: int) -> None:
        state = chart.start()
        for _ in range(length):
            event, payload = draw_event(data, chart, state)
            before_json = state.to_json()
            before_payload = copy.deepcopy(payload)
            result = chart.send(state, event, payload, event_id="same")
            assert payload == before_payload  # the payload is untouched
            assert state.to_json() == before_json  # so is the state
            again = chart.send(state, event, payload, event_id="same")
            assert again == result  # deterministic
            if result.status is Status.REJECTED:
                assert result.state is state
                assert result.emitted == ()
                assert result.reason is not None
            elif result.status is Status.ALREADY_APPLIED:
                assert result.state is state and result.emitted == () and result.evidence == ()
            else:
                assert result.reason is None and result.evidence
            assert State.from_json(chart, result.state.to_json()) == result.state
            state = result.state

    check()


@pytest.mark.parametrize("name", sorted(ONE_MICROSTEP_CHARTS))
def test_the_memoized_fast_path_equals_the_general_macrostep(name: str) -> None:
    """`send` (the memo of data-free macrosteps and the one-microstep path) and the
    general loop give equal results: status, reason, state, messages, evidence, and
    the same words for a rejection (an expression that fails, a broken invariant)."""
    chart = ONE_MICROSTEP_CHARTS[name]

    @SETTINGS
    @given(st.data(), st.integers(min_value=1, max_value=30))
    def check(data: st.DataObject, length: int) -> None:
        state = chart.start()
        for i in range(length):
            event, payload = draw_event(data, chart, state)
            fast = chart.send(state, event, payload, event_id=f"e{i}")
            general = step(chart.tables, state, event, payload, f"e{i}", memoised=False)
            assert fast == general
            assert fast.message == general.message
            state = fast.state

    check()

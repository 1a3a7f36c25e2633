"""The compiled selection of events that read data (`statekit.engine.compiled_choice`)
against the general loop, on the reference charts and on charts made for it.

`Chart.send` selects an event whose guards read data with a choice compiled per
configuration and event, then runs the chosen transition's compiled macrostep (with
its evidence prebuilt when the chart has no secrets, `statekit.engine.compiled_evidence`)
or the general loop; a data-free macrostep comes from the memo, its evidence made
directly (`static_evidence`); `step(..., memoised=False)` runs SCXML's selection and the
general loop alone. On random streams with random payloads both must give the same
`Result` (status, reason, state, messages, timers, evidence), the same message for a
rejection, the same state JSON and the same stored evidence bytes (`evidence_json`).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_properties import CHARTS, ONE_MICROSTEP_CHARTS, SETTINGS, draw_event

import statekit
from statekit.compiler.pipeline import compile_source
from statekit.engine.compiled_choice import NOT_COMPILED, compiled_choice
from statekit.engine.result import Result, Status
from statekit.engine.state import State
from statekit.engine.step import step
from statekit.runner.evidence import evidence_json

CHOICES = """
statechart: choices
description: >-
  Data-reading selections of every shape one atomic state can have: one guard, named
  guards in a list, an `if`, a guard that raises (division by zero), several
  candidates of one state and of its ancestor, a targetless transition that emits,
  an entry assign, and an eventless transition after it (which needs the general
  loop), with the `else` reasons a failing guard gives.
context:
  count: {type: integer, default: 0}
  limit: {type: integer, default: 10}
events:
  ADD: {n: {type: integer}}
  DIV: {n: {type: integer}}
  SAY: {n: {type: integer}}
  RESET: {}
guards:
  positive: {if: "event.n > 0", else: NOT_POSITIVE}
  within: {if: "ctx.count + event.n <= ctx.limit", else: OVER_LIMIT}
  divides: {if: "ctx.count // event.n >= 1", else: TOO_SMALL}
initial: outer
states:
  outer:
    initial: idle
    on:
      RESET: {to: outer.idle, do: [{assign: {count: 0}}]}
      ADD: {to: outer.full, guard: positive}
    states:
      idle:
        on:
          ADD:
            - to: outer.busy
              guard: [positive, within]
              do: [{assign: {count: ctx.count + event.n}}]
            - to: outer.idle
              if: "event.n == 0"
              do: [{emit: {type: Zero, payload: {n: event.n}}}]
          DIV: {to: outer.busy, guard: divides, do: [{assign: {count: ctx.count // event.n}}]}
          SAY: {guard: positive, do: [{emit: {type: Said, payload: {n: event.n}}}]}
      busy:
        entry: [{assign: {limit: ctx.limit + 1}}]
        on:
          ADD: {to: outer.idle, guard: within, do: [{assign: {count: ctx.count + event.n}}]}
          DIV: {to: outer.idle, guard: divides}
      full:
        always: {to: outer.idle, if: "ctx.count > 5"}
"""
FLAT_GUARDED = """
statechart: flat_guarded
context:
  count: {type: integer, default: 0}
  limit: {type: integer, default: 40}
events:
  GO: {n: {type: integer}}
  BACK: {n: {type: integer}}
guards:
  within:
    if: event.n > 0 and ctx.count + event.n <= ctx.limit
    else: OVER_LIMIT
initial: a
states:
  a: {on: {GO: {to: b, guard: within, do: [{assign: {count: ctx.count + event.n}}]}}}
  b: {on: {BACK: {to: a, guard: within, do: [{assign: {count: ctx.count + event.n}}]}}}
"""

STATIC = """
statechart: static_paths
description: Data-free macrosteps of the memo, with and without a payload, a secret one.
events:
  GO: {n: {type: integer}}
  HIDE: {pin: {type: string, secret: true}}
  BACK: {}
initial: a
states:
  a: {on: {GO: b, HIDE: b}}
  b: {on: {BACK: a, GO: c, HIDE: a}}
  c: {always: {to: a}}
"""


def _chart(text: str, name: str) -> statekit.Chart:
    ir = compile_source(text, name).chart
    assert ir is not None
    return statekit.Chart(ir)


COMPARED = {
    **ONE_MICROSTEP_CHARTS,
    "choices": _chart(CHOICES, "choices.yaml"),
    "flat_guarded": _chart(FLAT_GUARDED, "flat_guarded.yaml"),
    "static": _chart(STATIC, "static.yaml"),
}


def assert_same(fast: Result, general: Result, event_id: str) -> None:
    assert fast == general
    assert (fast.status, fast.reason, fast.message) == (
        general.status,
        general.reason,
        general.message,
    )
    assert fast.evidence == general.evidence
    assert fast.state.to_json() == general.state.to_json()
    assert [m.payload for m in fast.emitted] == [m.payload for m in general.emitted]
    if fast.status is not Status.REJECTED:
        assert evidence_json(fast, None, event_id) == evidence_json(general, None, event_id)


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_compiled_choices_equal_the_general_selection(name: str) -> None:
    chart = COMPARED[name]

    @SETTINGS
    @given(st.data(), st.integers(min_value=1, max_value=30))
    def check(data: st.DataObject, length: int) -> None:
        state = chart.start()
        for i in range(length):
            event, payload = draw_event(data, chart, state)
            if name in ("choices", "flat_guarded") and data.draw(st.integers(0, 3)) == 0:
                payload = {"n": data.draw(st.sampled_from([-3, 0, 1, 2, 7, 40]))}
                with_n = sorted(e for e in chart.ir.events if e != "RESET")
                event = data.draw(st.sampled_from(with_n))
            fast = chart.send(state, event, payload, event_id=f"e{i}")
            general = step(chart.tables, state, event, payload, f"e{i}", memoised=False)
            assert_same(fast, general, f"e{i}")
            state = fast.state if not fast.state.is_final else chart.start()

    check()


def _choice_of(chart: statekit.Chart, state: State, event: str) -> object:
    return compiled_choice(chart.tables, state._config, event)


def test_the_data_reading_selections_are_compiled_where_one_state_has_candidates() -> None:
    """The choice is compiled for every guarded event of the charts above (so the test
    above compares it), and left to SCXML's selection where two regions have candidates
    (the media player's parallel regions) or no guard reads data."""
    choices = COMPARED["choices"]
    idle = choices.start()
    for event in ("ADD", "DIV", "SAY"):
        assert callable(_choice_of(choices, idle, event)), event
    assert _choice_of(choices, idle, "RESET") is NOT_COMPILED  # guard-free
    flat = COMPARED["flat_guarded"]
    assert callable(_choice_of(flat, flat.start(), "GO"))
    compiled = sum(
        callable(_choice_of(chart, chart.start(), event))
        for chart in CHARTS.values()
        for event in chart.ir.events
    )
    assert compiled > 0


def test_a_guard_that_raises_is_worded_as_the_general_loop_words_it() -> None:
    chart = COMPARED["choices"]
    state = chart.send(chart.start(), "ADD", {"n": 3}).state  # busy, count 3
    state = chart.send(state, "ADD", {"n": 1}).state  # idle, count 4
    fast = chart.send(state, "DIV", {"n": 0}, event_id="d")
    general = step(chart.tables, state, "DIV", {"n": 0}, "d", memoised=False)
    assert fast.status is Status.REJECTED and fast.reason == "EVALUATION_ERROR"
    assert fast.message == general.message and "divides" in (fast.message or "")


def test_the_first_failing_guard_gives_the_reason() -> None:
    chart = COMPARED["flat_guarded"]
    refused = chart.send(chart.start(), "GO", {"n": 41}, event_id="g")
    assert (refused.status, refused.reason) == (Status.REJECTED, "OVER_LIMIT")
    assert refused == step(chart.tables, chart.start(), "GO", {"n": 41}, "g", memoised=False)

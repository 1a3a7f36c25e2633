"""The general path (`Chart(memo=False)`: the selection and the macrostep compiled per
(configuration, event), fused into one function where the event has that shape,
`statekit.engine.compiled_event`) against the reference loop (`memoised=False`).

On random streams with random payloads, on the reference charts and on charts made
for the compiled paths, `Chart(memo=False).send` and `Chart.send` (the cached path
where the memo answers, the general path elsewhere) must give the same `Result` as
the reference loop: status, reason, message, state and its JSON, messages, evidence
and the stored evidence bytes.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_compiled_choice import COMPARED, assert_same
from test_properties import SETTINGS, draw_event

import statekit
from statekit.compiler.pipeline import compile_source
from statekit.engine.compiled_event import NOT_COMPILED, compiled_event
from statekit.engine.result import Status
from statekit.engine.step import step

FLAT = """
statechart: flat
events: {LOAD: {}, STOP: {}, RESET: {}, TAG: {label: {type: string, default: x}}}
initial: idle
states:
  idle: {on: {LOAD: loading, TAG: idle}}
  loading: {on: {STOP: stopped}}
  stopped: {on: {RESET: idle}}
"""
INVARIANT = """
statechart: bounded
context:
  count: {type: integer, default: 0}
events:
  ADD: {n: {type: integer}}
invariants:
  at_most_ten: {assert: "ctx.count <= 10"}
  no_zero_divisor: {assert: "10 // (ctx.count - 7) != 99"}
initial: a
states:
  a: {on: {ADD: {to: a, do: [{assign: {count: ctx.count + event.n}}]}}}
"""


def _ir(text: str, name: str) -> object:
    ir = compile_source(text, name).chart
    assert ir is not None
    return ir


def _without_memo(chart: statekit.Chart) -> statekit.Chart:
    return statekit.Chart(chart.ir, memo=False)


EXTRA = {
    "flat": statekit.Chart(_ir(FLAT, "flat.yaml")),  # type: ignore[arg-type]
    "bounded": statekit.Chart(_ir(INVARIANT, "bounded.yaml")),  # type: ignore[arg-type]
}
CHARTS = {**COMPARED, **EXTRA}


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_the_general_path_equals_the_reference_loop(name: str) -> None:
    cached = CHARTS[name]
    general = _without_memo(cached)

    @SETTINGS
    @given(st.data(), st.integers(min_value=1, max_value=30))
    def check(data: st.DataObject, length: int) -> None:
        state = general.start()
        for i in range(length):
            event, payload = draw_event(data, general, state)
            if "n" in str(general.ir.events.get(event)) and data.draw(st.integers(0, 3)) == 0:
                payload = {"n": data.draw(st.sampled_from([-3, 0, 1, 2, 3, 7, 40]))}
            fast = general.send(state, event, payload, event_id=f"e{i}")
            reference = step(general.tables, state, event, payload, f"e{i}", memoised=False)
            assert_same(fast, reference, f"e{i}")
            memoised = cached.send(cached.state_from_json(state.to_json()), event, payload)
            assert (memoised.status, memoised.reason) == (fast.status, fast.reason)
            state = fast.state if not fast.state.is_final else general.start()

    check()


def test_without_the_memo_a_data_free_event_takes_the_fused_general_path() -> None:
    """`memo=False` is not the reference loop: the flat chart's guard-free events are
    fused, and their evidence is the reference loop's."""
    chart = _without_memo(EXTRA["flat"])
    start = chart.start()
    assert callable(compiled_event(chart.tables, start._config, "LOAD"))
    assert compiled_event(chart.tables, start._config, "STOP") is NOT_COMPILED
    first = chart.send(start, "LOAD", event_id="a")
    again = chart.send(start, "LOAD", event_id="b")
    assert first.evidence == again.evidence
    assert first.evidence == step(chart.tables, start, "LOAD", None, "a", memoised=False).evidence
    tagged = chart.send(start, "TAG", {"label": "y"}, event_id="t")
    assert dict(tagged.evidence[0].payload) == {"label": "y"}


def test_an_invariant_the_general_path_breaks_is_worded_as_the_reference_words_it() -> None:
    chart = _without_memo(EXTRA["bounded"])
    over = chart.send(chart.start(), "ADD", {"n": 11}, event_id="o")
    assert (over.status, over.reason, over.invariant) == (
        Status.REJECTED,
        "INVARIANT_VIOLATION",
        "at_most_ten",
    )
    failing = chart.send(chart.start(), "ADD", {"n": 7}, event_id="f")
    assert (failing.status, failing.reason) == (Status.REJECTED, "EVALUATION_ERROR")
    for result, event_id, n in ((over, "o", 11), (failing, "f", 7)):
        reference = step(chart.tables, chart.start(), "ADD", {"n": n}, event_id, memoised=False)
        assert_same(result, reference, event_id)

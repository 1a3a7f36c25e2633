"""The memo of data-free macrosteps: its verdicts per (configuration, event), used by the step."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, machine

from statekit.engine.algorithm import macrostep
from statekit.engine.chart import Chart
from statekit.engine.errors import LivelockError
from statekit.engine.memo import memoised_macrostep
from statekit.engine.result import LIVELOCK, Status
from statekit.engine.tables import DependsOnData, NoCandidates, StaticLivelock, StaticMacrostep

FAST = """
statechart: fast
context: {n: integer}
events: {GO: {}, GUARDED: {}, COUNT: {}, BACK: {}, ODD: {}}
initial: a
states:
  a: {on: {GO: b, GUARDED: {to: b, if: ctx.n > 0}, COUNT: {do: [{assign: {n: 1}}]}}}
  b: {always: c}
  c: {on: {BACK: a}}
"""

SPIN = """
statechart: spin
events: {GO: {}}
initial: a
states:
  a: {on: {GO: b}}
  b: {always: c}
  c: {always: b}
"""


def test_a_guard_free_effect_free_macrostep_is_memoised_with_its_plans() -> None:
    chart = machine(FAST)
    s0 = chart.start()
    config = chart.tables.configuration(s0.active_ids)
    known = memoised_macrostep(chart.tables, config, "GO")
    assert isinstance(known, StaticMacrostep)
    assert known.target.paths == {"c"} and len(known.plans) == 2  # GO, then b -> c
    assert memoised_macrostep(chart.tables, config, "GO") is known  # cached
    go = chart.send(s0, "GO")
    assert go.state.active_ids == known.target.ids
    assert [m.event for m in go.evidence] == ["GO", None]
    assert [m.entered for m in go.evidence] == [("b",), ("c",)]


def test_a_guard_or_an_effect_makes_the_macrostep_depend_on_data() -> None:
    chart = machine(FAST)
    config = chart.tables.configuration(chart.start().active_ids)
    for event in ("GUARDED", "COUNT"):
        assert isinstance(memoised_macrostep(chart.tables, config, event), DependsOnData)
    assert isinstance(memoised_macrostep(chart.tables, config, "ODD"), NoCandidates)
    assert chart.send(chart.start(), "ODD").status is Status.REJECTED


def test_a_data_free_livelock_is_memoised_with_the_general_loops_message() -> None:
    chart = machine(SPIN)
    s0 = chart.start()
    with pytest.raises(LivelockError) as general:
        macrostep(chart.tables, s0.active_ids, {}, s0.context, ("GO", {}))
    config = chart.tables.configuration(s0.active_ids)
    known = memoised_macrostep(chart.tables, config, "GO")
    assert isinstance(known, StaticLivelock) and known.message == str(general.value)
    assert len(known.plans) == chart.max_microsteps
    for _ in range(2):
        result = chart.send(s0, "GO")
        assert result.status is Status.REJECTED and result.reason == LIVELOCK
        assert result.state is s0 and result.emitted == ()
        assert result.message == str(general.value)


@pytest.mark.parametrize("bound", [1, 2, 3])
def test_the_memoised_livelock_bound_is_the_charts(bound: int) -> None:
    chart = Chart(chart_of(SPIN.replace("c: {always: b}", "c: {}")), max_microsteps=bound)
    config = chart.tables.configuration(chart.start().active_ids)
    known = memoised_macrostep(chart.tables, config, "GO")
    assert isinstance(known, StaticLivelock if bound < 2 else StaticMacrostep)

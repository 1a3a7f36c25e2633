"""The SCXML structural procedures over the state table: domains, entry sets, classification."""

from __future__ import annotations

from chart_helpers import chart_of

from statekit.compiler import scxml_procedures as scxml
from statekit.compiler.ir import CompiledChart

CHART = """
statechart: procedures
events: {GO: {}, STOP: {}, PING: {}}
initial: a
states:
  a:
    initial: b
    reject: {"*": NOT_HERE, STOP: CANNOT_STOP}
    states:
      b: {already: [PING], reject: {STOP: BUSY}}
      c: {}
      h: {history: shallow}
  p:
    parallel: true
    states:
      left: {initial: x, states: {x: {}, y: {}}}
      right: {initial: z, states: {z: {}}}
"""


def ids(chart: CompiledChart, *paths: str) -> tuple[int, ...]:
    return tuple(chart.state(p).id for p in paths)


def test_descendants_ancestors_and_the_lcca() -> None:
    chart = chart_of(CHART)
    (a, b, x, z, p) = ids(chart, "a", "a.b", "p.left.x", "p.right.z", "p")
    assert scxml.is_descendant(chart.states, b, a) and not scxml.is_descendant(chart.states, a, b)
    assert scxml.proper_ancestors(chart.states, x, None) == [chart.state("p.left").id, p, 0]
    assert scxml.find_lcca(chart.states, [x, z]) == 0  # a parallel state is not compound
    assert scxml.find_lcca(chart.states, [b, chart.state("a.c").id]) == a


def test_domain_and_entry_set_of_a_transition_into_a_region() -> None:
    chart = chart_of(CHART)
    (b, y) = ids(chart, "a.b", "p.left.y")
    domain = scxml.transition_domain(chart.states, b, (y,), scxml.no_history)
    assert domain == 0
    entered = scxml.entry_set(chart.states, (y,), domain, scxml.no_history)
    assert entered == ids(chart, "p", "p.left", "p.left.y", "p.right", "p.right.z")
    assert scxml.transition_domain(chart.states, b, (), scxml.no_history) is None


def test_history_targets_use_the_recorded_states_or_the_default() -> None:
    chart = chart_of(CHART)
    (h, b, c) = ids(chart, "a.h", "a.b", "a.c")
    assert scxml.effective_targets(chart.states, (h,), scxml.no_history) == [b]
    assert scxml.effective_targets(chart.states, (h,), lambda _: (c,)) == [c]


def test_default_entry_enters_every_region() -> None:
    chart = chart_of(CHART)
    (p,) = ids(chart, "p")
    assert scxml.default_entry(chart.states, p) == ids(
        chart, "p", "p.left", "p.left.x", "p.right", "p.right.z"
    )


def test_classification_prefers_the_deepest_state_and_an_exact_name() -> None:
    chart = chart_of(CHART)
    (a, b) = ids(chart, "a", "a.b")
    assert scxml.static_classification(chart.states, (a, b), "PING") == (b, "NOT_HERE", a)
    assert scxml.static_classification(chart.states, (a, b), "STOP") == (None, "BUSY", b)
    assert scxml.static_classification(chart.states, (0,), "GO") == (None, None, None)

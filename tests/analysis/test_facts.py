"""ChartFacts: one exploration per chart and what the chart rules read of it."""

from __future__ import annotations

from analysis_charts import chart_of

from statekit.analysis.facts import (
    bottom_components,
    chart_facts,
    ending,
    facts_of,
    reached_states,
    selected_transitions,
    successors,
)
from statekit.analysis.options import ExplorationOptions, explore_with

TRAP = """
statechart: trap
events: {GO: {}, BACK: {}, STUCK: {}}
initial: a
states:
  a: {on: {GO: b, STUCK: c}}
  b: {on: {BACK: a, GO: done}}
  c: {on: {GO: d}}
  d: {on: {GO: c}}
  done: {final: true}
"""


def test_the_facts_are_those_of_the_exploration() -> None:
    chart = chart_of(TRAP)
    facts = chart_facts(chart, ExplorationOptions())
    explored = facts.exploration
    assert explored.complete
    assert dict(facts.reached_states) == reached_states(explored)
    assert dict(facts.selected_transitions) == selected_transitions(explored)
    assert facts.successors == successors(explored)
    assert facts.ending == frozenset(ending(explored, facts.successors))
    paths = {n.id: n.config.paths for n in explored.nodes}
    assert {frozenset(paths[n]) for n in facts.ending} == {
        frozenset({"a"}),
        frozenset({"b"}),
        frozenset({"done"}),
    }
    trapped = {n.id for n in explored.nodes} - facts.ending
    (trap,) = bottom_components(facts.successors, trapped)
    assert {next(iter(paths[n])) for n in trap} == {"c", "d"}
    assert facts_of(explored).left_states == facts.left_states


def test_the_options_bound_the_exploration() -> None:
    chart = chart_of(TRAP)
    bounded = explore_with(chart, ExplorationOptions(max_configurations=2))
    assert not bounded.complete and len(bounded.nodes) == 2
    seen: list[tuple[int, int]] = []

    def progress(expanded: int, found: int) -> None:
        seen.append((expanded, found))

    class Factory:
        def __call__(self, _chart: object) -> Factory:
            return self

        def __enter__(self) -> object:
            return progress

        def __exit__(self, *_exc: object) -> None:
            return None

    explore_with(chart, ExplorationOptions(progress=Factory()))  # type: ignore[arg-type]
    assert seen and seen[-1][0] == seen[-1][1]

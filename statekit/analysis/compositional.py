"""Regions explored compositionally: each independent component apart, not their product.

When the chart's root is parallel and its regions fall into independent
components (`statekit.analysis.components`), the lint facts
(`statekit.analysis.facts.chart_facts`) and `find_races` explore the chart
from its initial configuration as usual, but a node reached by an event of
one component is expanded with that component's events only (and the events
no region handles). The exploration is then the union of one exploration per
component, each with the other components in their initial configuration: a
chart of twenty independent regions of three states has 41 abstract states
instead of 3^20. Every node and every path in it is a node and a path of the
whole chart, so every counterexample replays as it is.

What the findings need of the product, and why the union gives it:

- reachable and unreachable states, dead states, selected and unreachable
  transitions, transient timers, unclassified (state, event) pairs, shadowed
  `reject` entries and conflicting transitions are about one state, one
  transition or one event; they involve one component, whose behaviour does
  not depend on where the others are, so its own exploration decides them;
- an invariant involves the components of the states it mentions and of the
  fields it reads, which are therefore one component;
- a race needs two events that do not commute; events of independent
  components always commute, so every race lies within one component;
- the chart's end needs every region final: a node can end when its own
  component can reach a final configuration of its regions and every other
  component can from its initial one (`composed_ending`), which is what
  `no-final-path` reads.

The findings are the same as the product's; the notes that count
configurations count the union's, and a counterexample shows the other
components in their initial configuration. So that a chart whose product is
cheap keeps every note as it was, the regions are explored apart only when
their product may have more than `ExplorationOptions.compose_above`
configurations (`COMPOSE_ABOVE`, 10,000, by default; `configurations_bound`);
`compose_above=0` always explores them apart, `sys.maxsize` never. When two
components' nodes meet (start values that differ in two components), the
product is built too. `find_races` (`statekit races`) explores the same way:
pairs of events of independent components, which always commute, are then
not listed among the convergent pairs.
"""

from __future__ import annotations

import math

from statekit.analysis.components import independent_components
from statekit.analysis.exploration import EVERY, Exploration
from statekit.analysis.explorer import ComponentsMet
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.compiler.ir import CompiledChart, StateKind
from statekit.engine.tables import is_in_final_state


def configurations_bound(chart: CompiledChart, state: int = 0) -> int:
    """How many configurations the subtree of `state` can have at most: one per atomic
    state, the sum over a compound state's children, the product over a parallel
    state's (history values and context aside)."""
    node = chart.states[state]
    if not node.children:
        return 1
    counts = [configurations_bound(chart, child) for child in node.children]
    if node.kind is StateKind.PARALLEL:
        return math.prod(counts)
    return sum(counts)


def explore_composed(chart: CompiledChart, options: ExplorationOptions) -> Exploration:
    """Explore `chart` under `options`: its independent regions apart when their product
    may have more than `options.compose_above` configurations (see the module docstring)."""
    large = configurations_bound(chart) > options.compose_above
    components = independent_components(chart) if large else None
    if components is None:
        return explore_with(chart, options)
    try:
        return explore_with(chart, options, components)
    except ComponentsMet:
        return explore_with(chart, options)


def composed_ending(exploration: Exploration, succ: tuple[tuple[int, ...], ...]) -> set[int]:
    """The nodes of a compositional exploration from which the whole chart can end (see
    the module docstring), given the `successors` of its nodes."""
    components = exploration.components
    assert components is not None
    tags = exploration.component_tags
    parents = exploration.parent_index
    states = exploration.chart.states
    count = len(tags)
    roots = [0] * count
    for node in range(count):  # breadth first: a parent comes before its children
        roots[node] = node if tags[node] == EVERY else roots[parents[node]]
    can_end: list[set[int]] = []
    for k, regions in enumerate(components.components):
        among = [n for n in range(count) if tags[n] in (EVERY, k)]
        predecessors: dict[int, list[int]] = {n: [] for n in among}
        for n in among:
            for target in succ[n]:
                if target in predecessors:
                    predecessors[target].append(n)
        found: set[int] = set()
        for n in among:
            ids = exploration.config_at(exploration.config_index[n]).ids
            if all(is_in_final_state(states, r, ids) for r in regions):
                found.add(n)
        stack = list(found)
        while stack:
            for p in predecessors[stack.pop()]:
                if p not in found:
                    found.add(p)
                    stack.append(p)
        can_end.append(found)
    ending: set[int] = set()
    for node in range(count):
        tag, root = tags[node], roots[node]
        if all((node if k == tag else root) in found for k, found in enumerate(can_end)):
            ending.add(node)
    return ending

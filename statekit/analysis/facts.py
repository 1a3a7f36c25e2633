"""Facts derived from an exploration, computed once per chart and shared by the rules.

`chart_facts(chart, options)` explores the chart and derives every fact the
chart rules read into one frozen `ChartFacts`; the lint runner passes it to
each rule (`check(chart, facts)`). The derivations are also plain functions
of an `Exploration` (for `explain` and `paths`). A *witness* says where
something was first seen, as `(node, outcome)`: the state is active in
`node` when `outcome` is None, else the outcome (a macrostep from `node`, -1
for the initial macrostep) entered or fired it. Nodes are visited in
breadth-first order, so witnesses are as close to the start as the
exploration knows.

Semantics: a state counts as reached, and a transition as selected, when any
macrostep from a reachable configuration enters or fires it, even if the same
macrostep leaves it again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from statekit.analysis.compositional import composed_ending, explore_composed
from statekit.analysis.exploration import Exploration
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.options import ExplorationOptions
from statekit.analysis.witness import PathReplays
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import is_in_final_state

Witness = tuple[int, MacrostepBranch | None]


@dataclass(frozen=True, slots=True)
class ChartFacts:
    """One chart's exploration and the facts derived from it, as the chart rules read them.

    `reached_states` and `selected_transitions` map ids to their witnesses;
    `left_states` are states some macrostep exits; `successors[node]` are the
    nodes its outcomes lead to; `ending` the nodes from which a final
    configuration is reachable; `replays` the checked payloads of the paths the
    rules print (`witness.PathReplays`, searched on demand).
    """

    exploration: Exploration
    reached_states: Mapping[int, Witness]
    selected_transitions: Mapping[int, Witness]
    left_states: frozenset[int]
    successors: tuple[tuple[int, ...], ...]
    ending: frozenset[int]
    replays: PathReplays
    """Checked payloads for the paths the rules print (found on demand, cached per node)."""


def chart_facts(chart: CompiledChart, options: ExplorationOptions) -> ChartFacts:
    """Explore `chart` under `options` and derive every fact (see `ChartFacts`); its
    independent regions apart when their product is large (`statekit.analysis.compositional`)."""
    return facts_of(explore_composed(chart, options))


def facts_of(exploration: Exploration) -> ChartFacts:
    """Every fact of an exploration (see `ChartFacts`)."""
    succ = successors(exploration)
    return ChartFacts(
        exploration=exploration,
        reached_states=reached_states(exploration),
        selected_transitions=selected_transitions(exploration),
        left_states=frozenset(left_states(exploration)),
        successors=succ,
        ending=frozenset(
            ending(exploration, succ)
            if exploration.components is None
            else composed_ending(exploration, succ)
        ),
        replays=PathReplays(exploration),
    )


def outcomes(exploration: Exploration) -> Iterator[tuple[int, MacrostepBranch]]:
    """Every (source node, outcome), the initial macrostep (source -1) first.

    The microsteps of a LIVELOCK outcome are rolled back by the engine: facts
    about what a macrostep enters, fires or exits read only applied outcomes.
    """
    for outcome in exploration.initial:
        yield -1, outcome
    for node in exploration.nodes:
        for outcome in node.outcomes or ():
            yield node.id, outcome


def reached_states(exploration: Exploration) -> dict[int, Witness]:
    """State id → where it was first active or entered."""
    found: dict[int, Witness] = {}
    for outcome in exploration.initial:
        for plan in outcome.steps if outcome.fired else ():
            for s in plan.entry_order:
                found.setdefault(s, (-1, outcome))
    for node in exploration.nodes:
        for s in node.config.ids:
            if s not in found:
                found[s] = (node.id, None)
        for outcome in node.outcomes or ():
            for plan in outcome.steps if outcome.fired else ():
                for s in plan.entry_order:
                    if s not in found:
                        found[s] = (node.id, outcome)
    return found


def selected_transitions(exploration: Exploration) -> dict[int, Witness]:
    """Transition id → the first macrostep that fired it."""
    found: dict[int, Witness] = {}
    for source, outcome in outcomes(exploration):
        for plan in outcome.steps if outcome.fired else ():
            for t in plan.transitions:
                if t not in found:
                    found[t] = (source, outcome)
    return found


def left_states(exploration: Exploration) -> set[int]:
    """States that some macrostep exits from an abstract state in which they are active."""
    found: set[int] = set()
    for node in exploration.nodes:
        ids = node.config.ids
        for outcome in node.outcomes or ():
            for plan in outcome.steps if outcome.fired else ():
                found.update(s for s in plan.exit_order if s in ids)
    return found


def can_end(chart: CompiledChart) -> bool:
    """Whether the chart can be final at all: a top-level final state (compound root)
    or, for a parallel root, a final state reachable in every region."""
    states = chart.states
    return is_in_final_state(states, 0, frozenset(s.id for s in states))


def successors(exploration: Exploration) -> tuple[tuple[int, ...], ...]:
    """Node → the nodes its outcomes lead to (beyond the limit excluded)."""
    return tuple(
        tuple(sorted({o.target for o in node.outcomes or () if o.target >= 0}))
        for node in exploration.nodes
    )


def ending(exploration: Exploration, succ: tuple[tuple[int, ...], ...]) -> set[int]:
    """Nodes from which a final configuration is reachable (final ones included), given
    the `successors` of the exploration."""
    nodes = exploration.nodes
    predecessors: list[list[int]] = [[] for _ in nodes]
    for node_id, targets in enumerate(succ):
        for target in targets:
            predecessors[target].append(node_id)
    found = {n.id for n in nodes if n.config.final}
    stack = list(found)
    while stack:
        for p in predecessors[stack.pop()]:
            if p not in found:
                found.add(p)
                stack.append(p)
    return found


def bottom_components(
    succ: tuple[tuple[int, ...], ...], among: set[int] | frozenset[int]
) -> list[list[int]]:
    """The strongly connected components of the nodes in `among` that no edge leaves
    (Tarjan's algorithm, iterative), given each node's successors; `among` must be
    closed under successors."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in sorted(among):
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, i = work[-1]
            targets = succ[node]
            if i < len(targets):
                work[-1] = (node, i + 1)
                target = targets[i]
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[int] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    bottom = []
    for component in components:
        members = set(component)
        if all(t in members for n in component for t in succ[n]):
            bottom.append(component)
    return bottom

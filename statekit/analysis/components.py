"""Which regions of a parallel root can be explored apart: the independent components.

Two regions of the root's parallel state are *coupled* when what one does can
change what the other does or what a finding about it says:

- an event both handle: a transition on it, or an `already`/`reject` entry
  (named or `*`) on a state below the region's own (the region's own state is
  active whenever the chart is, so its entries answer the same everywhere);
  an `after` timer's event belongs to the region of its state;
- an event one raises or sends that the other handles;
- a guard, effect, timer or eventless transition of one that reads whether a
  state of the other is active (`active()`);
- a context field one assigns and the other reads or assigns;
- a `cancel`, `pause` or `resume` in one naming a timer or a send of the other;
- an invariant mentioning states of both, or reading a field the other assigns;
- an eventless transition of one whose guard reads the payload (`event.*`) of
  whatever event the macrostep runs: it couples the region with every region
  that handles an event.

`now` is an input, not a coupling. The parallel root's `done` needs every
region final; that couples them only for the chart's end, which
`statekit.analysis.compositional` answers without the product.

`independent_components(chart)` groups the regions by the transitive closure
of the coupling (union-find) and returns None when there is nothing to gain:
a root that is not parallel, a root with transitions of its own, a region
with a transition whose domain is the root (to another region's state, or an
external one on the region's own state: each leaves and re-enters every
region), or a single component.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from statekit.compiler.effect_walk import effect_conditions, leaf_effects
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.tree import (
    Active,
    ContextRef,
    EventMeta,
    EventRef,
    iter_nodes,
)
from statekit.compiler.invariant_ir import ExpressionInvariant
from statekit.compiler.ir import (
    Assign,
    Cancel,
    CompiledChart,
    Effect,
    Emit,
    Pause,
    Raise,
    Resume,
    Send,
    StateKind,
    TransitionKind,
)

WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class RegionComponents:
    """The regions of the parallel root grouped into independent components.

    `components[k]` are the region state ids of component k (document order);
    `event_component` maps every event (declared or timer) some region handles to
    the component of the regions that handle it; an event no region handles is
    absent (it changes no region: every component may receive it)."""

    components: tuple[tuple[int, ...], ...]
    event_component: Mapping[str, int]

    def events_of(self, component: int, events: Iterable[str]) -> tuple[str, ...]:
        """Those of `events` that component `component` handles, or that none handles."""
        owner = self.event_component
        return tuple(e for e in events if owner.get(e, component) == component)


@dataclass(slots=True)
class _Uses:
    """What one region's states do that another region could notice."""

    handles: set[str]
    raises: set[str]
    reads_states: set[int]
    reads_fields: set[str]
    writes_fields: set[str]
    timer_names: set[str]
    timer_refs: set[str]
    wildcard: bool = False


class _UnionFind:
    def __init__(self, items: Iterable[int]) -> None:
        self.parent = {item: item for item in items}

    def find(self, item: int) -> int:
        parent = self.parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(self, items: Iterable[int]) -> None:
        found = [self.find(item) for item in items]
        for other in found[1:]:
            self.parent[self.find(other)] = self.find(found[0])


def _expressions_of(effect: Effect) -> Iterator[Expression]:
    if isinstance(effect, Assign):
        yield from (value for _name, value in effect.assignments)
    elif isinstance(effect, Emit | Raise):
        yield from (value for _name, value in effect.payload)
    elif isinstance(effect, Send):
        yield from (value for _name, value in effect.payload)
        yield from (e for e in (effect.delay, effect.at) if e is not None)


def _read(uses: _Uses, expression: Expression) -> bool:
    """Record what `expression` reads; whether it reads the event's payload."""
    payload = False
    for node in iter_nodes(expression.tree):
        if isinstance(node, Active):
            uses.reads_states.add(node.state_id)
        elif isinstance(node, ContextRef):
            uses.reads_fields.add(node.field)
        elif isinstance(node, EventRef | EventMeta):
            payload = True
    return payload


def _effects(uses: _Uses, effects: Iterable[Effect]) -> None:
    effects = tuple(effects)
    for check in effect_conditions(effects):  # an `if`'s conditions, then every branch
        _read(uses, check.expression)
    for effect in leaf_effects(effects):
        for expression in _expressions_of(effect):
            _read(uses, expression)
        if isinstance(effect, Assign):
            uses.writes_fields.update(name for name, _value in effect.assignments)
        elif isinstance(effect, Raise):
            uses.raises.add(effect.event)
        elif isinstance(effect, Send):
            uses.raises.add(effect.event)
            if effect.id is not None:
                uses.timer_names.add(effect.id)
        elif isinstance(effect, Cancel):
            uses.timer_refs.add(effect.id)
        elif isinstance(effect, Pause | Resume):
            uses.timer_refs.add(effect.name)


def _region_uses(chart: CompiledChart, region: int) -> _Uses:
    states = chart.states
    uses = _Uses(set(), set(), set(), set(), set(), set(), set())
    for state in states[region : states[region].last_descendant + 1]:
        _effects(uses, state.entry)
        _effects(uses, state.exit)
        for invocation in state.invocations:  # its finalize runs in this region
            _effects(uses, invocation.finalize)
        if state.id != region:
            for entry in state.already + state.reject:
                if entry.event == WILDCARD:
                    uses.wildcard = True
                else:
                    uses.handles.add(entry.event)
        for timer_id in state.timers:
            timer = chart.timers[timer_id]
            uses.handles.add(timer.name)
            uses.timer_names.add(timer.name)
            if timer.label is not None:
                uses.timer_names.add(timer.label)
            if timer.expression is not None:
                _read(uses, timer.expression)
        for transition_id in state.transitions:
            transition = chart.transitions[transition_id]
            eventless = transition.kind is not TransitionKind.EVENT
            if transition.event is not None and not eventless:
                uses.handles.add(transition.event)
            for guard in transition.guards:
                if _read(uses, guard.expression) and eventless:
                    uses.wildcard = True
            _effects(uses, transition.effects)
    return uses


def _region_of(chart: CompiledChart, regions: frozenset[int], state: int) -> int | None:
    for s in (state, *chart.states[state].ancestors):
        if s in regions:
            return s
    return None


def independent_components(chart: CompiledChart) -> RegionComponents | None:
    """The independent components of the parallel root's regions (see the module
    docstring), or None when the chart has nothing to explore apart."""
    root = chart.root
    if root.kind is not StateKind.PARALLEL or root.transitions or len(root.children) < 2:
        return None
    regions = root.children
    if _leaves_a_region(chart, regions):
        return None
    members = frozenset(regions)
    uses = {r: _region_uses(chart, r) for r in regions}
    joined = _UnionFind(regions)
    handlers: dict[str, set[int]] = {}
    for r, used in uses.items():
        for event in used.handles:
            handlers.setdefault(event, set()).add(r)
    wildcards = [r for r, used in uses.items() if used.wildcard]
    if wildcards:
        joined.union([*wildcards, *(r for found in handlers.values() for r in found)])
    for found in handlers.values():
        joined.union(found)
    writers: dict[str, set[int]] = {}
    named: dict[str, set[int]] = {}
    for r, used in uses.items():
        for event in used.raises:
            joined.union([r, *handlers.get(event, ())])
        for state in used.reads_states:
            joined.union([r, *_owners(chart, members, [state])])
        for field in used.writes_fields:
            writers.setdefault(field, set()).add(r)
        for name in used.timer_names:
            named.setdefault(name, set()).add(r)
    for r, used in uses.items():
        for field in used.reads_fields | used.writes_fields:
            joined.union([r, *writers.get(field, ())])
        for name in used.timer_refs:
            joined.union([r, *named.get(name, ())])
    for invariant in chart.invariants:
        if isinstance(invariant, ExpressionInvariant):
            probe = _Uses(set(), set(), set(), set(), set(), set(), set())
            _read(probe, invariant.expression)
            mentioned = list(probe.reads_states)
            fields = probe.reads_fields
        else:
            mentioned = [*invariant.when, *invariant.require, *invariant.forbid]
            fields = set()
        touched = set(_owners(chart, members, mentioned))
        touched.update(r for field in fields for r in writers.get(field, ()))
        joined.union(touched)
    groups: dict[int, list[int]] = {}
    for r in regions:
        groups.setdefault(joined.find(r), []).append(r)
    if len(groups) < 2:
        return None
    components = tuple(tuple(group) for group in groups.values())
    number = {r: k for k, group in enumerate(components) for r in group}
    owner = {event: number[next(iter(found))] for event, found in handlers.items()}
    if wildcards:  # a `*` below a region answers every event no transition takes
        every = (*chart.events, *(t.name for t in chart.timers))
        owner.update((event, number[wildcards[0]]) for event in every if event not in owner)
    return RegionComponents(components, owner)


def _leaves_a_region(chart: CompiledChart, regions: tuple[int, ...]) -> bool:
    """Whether a transition of a region exits more than the region's own states (one to
    another region's state, or an external one on the region's own state, whose domain is
    the parallel root: it leaves and re-enters every region)."""
    states = chart.states
    owner: dict[int, range] = {}
    for r in regions:
        inside = range(r, states[r].last_descendant + 1)
        owner.update((s, inside) for s in inside)
    for t in chart.transitions:
        source = owner.get(t.source)
        if source is not None and t.domain is not None and t.domain not in source:
            return True
    return False


def _owners(chart: CompiledChart, regions: frozenset[int], states: Iterable[int]) -> Iterator[int]:
    for state in states:
        region = _region_of(chart, regions, state)
        if region is not None:
            yield region

"""Views: which part of a chart one drawing shows, and its edges with their labels.

A view has a focus state (the root for the whole chart or the overview, a
composite state for its own drawing). The states inside the focus are drawn
down to the composites it collapses; a transition whose end is hidden inside
a collapsed composite is drawn to that composite, and one whose end lies
outside the focus is drawn to a stub that names the outside state. Regions
of a parallel state are always expanded with it (a region alone says little).

A chart whose one drawing fits gets one view with every label. `--split
auto` gives an overview (the top level, composites collapsed, edges labelled
with their events) plus one view per composite state when the drawing would
not fit a page (its estimated width, `estimate`) or carry too many edges, and
always above `SPLIT_STATES` states or `SPLIT_TRANSITIONS` transitions:
Graphviz's `dot` 2.43 crashes or runs for minutes on large clustered charts
with many labelled edges (seen from 200 states). The choice depends on the
chart only, never on how `dot` behaves, so the same chart always gives the
same DOT text.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from statekit.compiler.ir import StateKind
from statekit.diagrams.dot_text import WRAP, label_rows
from statekit.diagrams.estimate import PAGE_WIDTH, Sizing, estimated_width
from statekit.diagrams.model import Diagram, DState, DTransition, EffectDetail

SPLIT_STATES = 100
SPLIT_TRANSITIONS = 300
CROWDED_TRANSITIONS = 60
"""Above this many transitions one drawing is a tangle whatever its width: `auto` splits."""


class Split(enum.Enum):
    """When to draw an overview plus one view per composite instead of one view."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class EdgeKind(enum.Enum):
    """A transition, the default entry of a composite, or the default of a history state."""

    TRANSITION = "transition"
    INITIAL = "initial"
    HISTORY = "history"


@dataclass(frozen=True, slots=True)
class EdgeLabel:
    """`TRIGGER [guard] / effects`, plus a note naming ends the drawing does not show."""

    trigger: str
    guard: str = ""
    effects: str = ""
    note: str = ""

    def text(self, effects: bool = True) -> str:
        """The label on one line."""
        parts = [self.trigger]
        if self.guard:
            parts.append(f"[{self.guard}]")
        if effects and self.effects:
            parts.append(f"/ {self.effects}")
        if self.note:
            parts.append(f"({self.note})")
        return " ".join(p for p in parts if p)

    def rows(self, width: int) -> list[str]:
        """The label in lines of at most `width` characters (`dot_text.label_rows`)."""
        return label_rows(self.trigger, self.guard, self.effects, self.note, width)


@dataclass(frozen=True, slots=True)
class ViewEdge:
    """An edge between drawn states (`source` None: the initial dot of `initial_of`).

    `stub_source`/`stub_target` mark ends drawn as stubs outside the focus.
    `transitions` are the transitions drawn (several when an overview merges
    edges); `cross_region` edges join two regions of a parallel state and must
    not pull the regions out of their side-by-side placement.
    """

    kind: EdgeKind
    source: int | None
    target: int
    transitions: tuple[int, ...] = ()
    label: EdgeLabel | None = None
    tooltip: str = ""
    initial_of: int | None = None
    stub_source: bool = False
    stub_target: bool = False
    cross_region: bool = False
    events: tuple[str, ...] = ()
    """The triggers of `transitions`, each once: what an overview's unlabelled edge is
    labelled with in DOT."""


@dataclass(frozen=True, slots=True)
class View:
    """One drawing of a chart: `key` is "" for the whole chart or overview, else the
    focus's path; `clusters` are expanded composites (the focus among them unless it
    is the root), `nodes` the states drawn as nodes, `collapsed` the composites among
    them; `labels` False leaves the edges' full labels out (DOT labels them with their
    `events`, tooltips keep the guards) and the lists inside states; `effects` is how
    much of the effects the labels show."""

    diagram: Diagram
    key: str
    title: str
    focus: int
    clusters: frozenset[int]
    nodes: frozenset[int]
    collapsed: frozenset[int]
    stubs: tuple[int, ...]
    edges: tuple[ViewEdge, ...]
    labels: bool
    effects: EffectDetail = EffectDetail.SHORT

    def drawn(self, state_id: int) -> bool:
        """Whether the state is drawn as a node or a cluster."""
        return state_id in self.nodes or state_id in self.clusters

    def internal(self, state: DState) -> tuple[DTransition, ...]:
        """Transitions shown inside a state's box: targetless ones and, for a
        cluster, those that leave and re-enter it (an edge cannot loop on a cluster)."""
        if not self.labels or state.id in self.collapsed:
            return ()
        d = self.diagram
        out = []
        for tid in state.transitions:
            t = d.transitions[tid]
            if not t.targets or (state.id in self.clusters and t.targets == (state.id,)):
                out.append(t)
        return tuple(out)


def is_large(diagram: Diagram) -> bool:
    """Whether the chart is above the size where one clustered, labelled drawing is safe."""
    return len(diagram.states) > SPLIT_STATES or len(diagram.transitions) > SPLIT_TRANSITIONS


def _visible(d: Diagram, focus: int, expanded: set[int]) -> tuple[set[int], set[int]]:
    """(clusters, nodes) of a view: descendants of `focus` reached through expanded composites."""
    clusters = {focus} if focus != 0 else set()
    nodes: set[int] = set()
    stack = [focus]
    while stack:
        state = d.states[stack.pop()]
        for child in state.children:
            if child in expanded and d.states[child].is_composite:
                clusters.add(child)
                stack.append(child)
            else:
                nodes.add(child)
    return clusters, nodes


class _Builder:
    """Maps the ends of transitions onto what a view draws."""

    def __init__(self, d: Diagram, focus: int, clusters: set[int], nodes: set[int]) -> None:
        self.d, self.focus, self.clusters, self.nodes = d, focus, clusters, nodes
        self.stubs: set[int] = set()
        self.parallel = any(s.kind is StateKind.PARALLEL for s in d.states)
        self.reps: dict[int, tuple[int, bool]] = {}

    def rep(self, state_id: int) -> tuple[int, bool]:
        """The drawn state standing for `state_id`, and whether it is a stub."""
        found = self.reps.get(state_id)
        if found is None:
            found = self.reps[state_id] = self._rep(state_id)
        return found

    def _rep(self, state_id: int) -> tuple[int, bool]:
        d, focus = self.d, self.focus
        if not (state_id == focus or d.states[focus].contains(state_id)):
            common = d.common_ancestor(state_id, focus)
            if common == state_id:  # an ancestor of the focus is its own stub
                return state_id, True
            return next(a for a in d.ancestry(state_id) if d.states[a].parent == common), True
        for candidate in d.ancestry(state_id):
            if candidate in self.nodes or candidate in self.clusters:
                return candidate, False
        return focus, False  # pragma: no cover - the focus is always drawn

    def crosses(self, a: int, b: int) -> bool:
        return self.parallel and self.d.crosses_regions(a, b)

    def primary_target(self, t: DTransition) -> int:
        """The target an edge is drawn to: the first one in the source's own region."""
        if len(t.targets) == 1:
            return t.targets[0]
        same_region = [x for x in t.targets if not self.crosses(t.source, x)]
        return (same_region or list(t.targets))[0]

    def transition_edge(
        self, t: DTransition, labels: bool, effects: EffectDetail
    ) -> ViewEdge | None:
        target = self.primary_target(t)
        (src, src_stub), (dst, dst_stub) = self.rep(t.source), self.rep(target)
        if src_stub and dst_stub:
            return None
        if src == dst and (src in self.clusters or (src in self.nodes and src != t.source)):
            return None  # drawn inside the cluster, or hidden inside a collapsed composite
        others = [self.d.states[x].ref for x in t.targets if x != target]
        notes = []
        if dst != target:
            notes.append(f"to {self.d.states[target].ref}")
        if others:
            notes.append("also enters " + ", ".join(others))
        if src != t.source:
            notes.append(f"from {self.d.states[t.source].ref}")
        if src_stub:
            self.stubs.add(src)
        if dst_stub:
            self.stubs.add(dst)
        label = EdgeLabel(t.trigger, t.guard_text(), t.effects_label(effects), "; ".join(notes))
        return ViewEdge(
            EdgeKind.TRANSITION,
            src,
            dst,
            (t.id,),
            label if labels else None,
            EdgeLabel(t.trigger, label.guard).text(),
            stub_source=src_stub,
            stub_target=dst_stub,
            cross_region=not (src_stub or dst_stub) and self.crosses(src, dst),
            events=(t.trigger,),
        )

    def structural_edges(self) -> list[ViewEdge]:
        """Initial dots of expanded compound states, and history defaults."""
        edges = []
        for cid in sorted(self.clusters | ({0} if self.focus == 0 else set())):
            state = self.d.states[cid]
            for target in state.initial:
                edges.append(ViewEdge(EdgeKind.INITIAL, None, self.rep(target)[0], initial_of=cid))
        for nid in sorted(self.nodes):
            state = self.d.states[nid]
            if state.history is not None:
                for target in state.initial:
                    edges.append(ViewEdge(EdgeKind.HISTORY, nid, self.rep(target)[0]))
        return edges


def _merge(edges: Iterable[ViewEdge]) -> list[ViewEdge]:
    """One edge per drawn pair (overviews): transitions, events and tooltips merged, in order."""
    merged: dict[tuple[int | None, int, bool, bool], ViewEdge] = {}
    for edge in edges:
        key = (edge.source, edge.target, edge.stub_source, edge.stub_target)
        old = merged.get(key)
        if old is None:
            merged[key] = edge
            continue
        tooltip = (
            old.tooltip
            if edge.tooltip in old.tooltip.split("\n")
            else old.tooltip + "\n" + edge.tooltip
        )
        events = old.events + tuple(e for e in edge.events if e not in old.events)
        merged[key] = ViewEdge(
            old.kind,
            old.source,
            old.target,
            old.transitions + edge.transitions,
            None,
            tooltip,
            old.initial_of,
            old.stub_source,
            old.stub_target,
            old.cross_region,
            events,
        )
    return list(merged.values())


def _touching(d: Diagram, focus: int, incoming: dict[int, list[int]] | None) -> list[int]:
    """Ids of the transitions with an end inside `focus`, in document order."""
    if focus == 0 or incoming is None:
        return [t.id for t in d.transitions]
    inside = range(focus, d.states[focus].last_descendant + 1)
    found = {tid for s in inside for tid in d.states[s].transitions}
    found.update(tid for s in inside for tid in incoming.get(s, ()))
    return sorted(found)


def _incoming(d: Diagram) -> dict[int, list[int]]:
    """Target state id → ids of the transitions that enter it."""
    incoming: dict[int, list[int]] = {}
    for t in d.transitions:
        for target in t.targets:
            incoming.setdefault(target, []).append(t.id)
    return incoming


def make_view(
    d: Diagram,
    focus: int,
    expanded: set[int],
    labels: bool,
    title: str,
    incoming: dict[int, list[int]] | None = None,
    effects: EffectDetail = EffectDetail.SHORT,
) -> View:
    """The view of `focus` with the composites in `expanded` drawn open.

    `incoming` (from `_incoming`) lets a composite's view look only at the
    transitions touching it instead of all of them.
    """
    clusters, nodes = _visible(d, focus, expanded)
    builder = _Builder(d, focus, clusters, nodes)
    edges = builder.structural_edges()
    transition_edges = [
        e
        for tid in _touching(d, focus, incoming)
        if d.transitions[tid].targets
        and (e := builder.transition_edge(d.transitions[tid], labels, effects)) is not None
    ]
    edges += transition_edges if labels else _merge(transition_edges)
    collapsed = frozenset(n for n in nodes if d.states[n].is_composite)
    return View(
        diagram=d,
        key=d.states[focus].path,
        title=title,
        focus=focus,
        clusters=frozenset(clusters),
        nodes=frozenset(nodes),
        collapsed=collapsed,
        stubs=tuple(sorted(builder.stubs)),
        edges=tuple(edges),
        labels=labels,
        effects=effects,
    )


def _regions(d: Diagram, state: DState) -> set[int]:
    """The regions of a parallel state (drawn open with it); nothing for other states."""
    return set(state.children) if state.kind is StateKind.PARALLEL else set()


def whole_view(d: Diagram, effects: EffectDetail = EffectDetail.SHORT) -> View:
    """Every state and every labelled transition in one drawing."""
    expanded = {s.id for s in d.states if s.is_composite}
    return make_view(d, 0, expanded, True, d.name, effects=effects)


def overview(d: Diagram) -> View:
    """The top level of a chart: composites collapsed, edges merged and labelled with
    their events only (guards, effects and the states inside are in the other views)."""
    return make_view(d, 0, _regions(d, d.root), False, f"{d.name} (overview)")


def composite_view(
    d: Diagram,
    state: DState,
    incoming: dict[int, list[int]] | None = None,
    effects: EffectDetail = EffectDetail.SHORT,
) -> View:
    """One composite state's children (their own composites collapsed) and its ends outside."""
    expanded = {state.id} | _regions(d, state)
    nodes_drawn = sum(len(d.states[c].children) or 1 for c in expanded)
    labels = nodes_drawn <= SPLIT_STATES
    title = f"{d.name}: {state.path}"
    return make_view(d, state.id, expanded, labels, title, incoming, effects)


def needs_split(d: Diagram, sizing: Sizing) -> bool:
    """What `--split auto` decides: split a chart above the size `dot` lays out safely
    (`is_large`), and a chart with composite states whose one drawing would be wider
    than a page (its `estimate.estimated_width` above `PAGE_WIDTH`) or crowded (above
    `CROWDED_TRANSITIONS` transitions)."""
    if is_large(d):
        return True
    if not any(s.is_composite and not s.region for s in d.states[1:]):
        return False  # nothing to split into
    crowded = len(d.transitions) > CROWDED_TRANSITIONS
    return crowded or estimated_width(d, sizing) > PAGE_WIDTH


def plan_views(
    d: Diagram,
    split: Split = Split.AUTO,
    effects: EffectDetail = EffectDetail.SHORT,
    wrap: int = WRAP,
) -> tuple[View, ...]:
    """The views to draw: the whole chart, or an overview plus one view per composite."""
    if split is Split.NEVER or (split is Split.AUTO and not needs_split(d, Sizing(wrap, effects))):
        return (whole_view(d, effects),)
    composites = [s for s in d.states[1:] if s.is_composite and not s.region]
    incoming = _incoming(d)
    return (overview(d), *(composite_view(d, s, incoming, effects) for s in composites))

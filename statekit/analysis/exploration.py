"""What an exploration found: the graph of reachable abstract states and the branches between them.

`statekit.analysis.explorer` builds an `Exploration`; the rules, `explain`
and `paths` read it. A `Node` is an abstract state (a configuration plus
recorded history values and the values of the tracked context fields,
`statekit.analysis.tracked_context`), a `MacrostepBranch` one result of one macrostep
under one set of data-guard assumptions, a `Step` one of its microsteps (both in
`statekit.analysis.macrostep_branches`), a
`Limit` a bound the exploration hit, a `SeenConflict` the first sighting of a
conflict resolution that removed transitions.

Stored compactly: an exploration may hold a hundred thousand abstract states
with nine outcomes each, so it keeps each abstract state as a few integers in
arrays (its configuration's, history's and tracked values' index, its parent, the slot of the
outcome that reached it, its depth) and each outcome as a shared branch (the
same event, assumptions and steps from every configuration where they occur)
plus its target; interned configurations are tuples of state ids. `nodes`
hands out `Node` views built on access, and a view's `outcomes` are rebuilt
from the shared branches each time they are read (equal, not identical, from
one read to the next). A `Step` holds no configuration, so one is shared by
every configuration where the same transitions exit and enter the same
states with the same effects.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from statekit.analysis.components import RegionComponents
from statekit.analysis.guards import Assumption
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.tracked_nodes import TrackedNodes
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import Configuration, Tables, TransitionConflict

EVERY = -1
"""`Exploration.component_tags` of a node expanded with every event."""
OUTCOME_CACHE = 4096
"""How many nodes' outcomes `Exploration.outcomes_of` keeps built."""

History = Mapping[int, tuple[int, ...]]
HistoryKey = tuple[tuple[int, tuple[int, ...]], ...]
_new = tuple.__new__


class Node:
    """An abstract state: a configuration, history values and tracked context values
    (`tracked`), first reached by `via`
    from node `parent` (-1: by the initial macrostep), `depth` events from the start;
    `outcomes` are its outcomes, declared events first, then timer events armed in
    it (None when the exploration stopped before expanding it).

    A view on the exploration's compact store, built on access (see the module
    docstring); two views of the same abstract state compare equal."""

    __slots__ = ("_of", "id")

    def __init__(self, exploration: Exploration, node_id: int) -> None:
        self._of = exploration
        self.id = node_id

    @property
    def config(self) -> Configuration:
        """The active states (interned in the exploration's `tables`)."""
        return self._of.config_at(self._of.config_index[self.id])

    @property
    def history(self) -> History:
        """Recorded history: history state id → recorded state ids."""
        return self._of.histories[self._of.history_index[self.id]]

    @property
    def history_key(self) -> HistoryKey:
        """The recorded history as sorted (history state, states) pairs."""
        return self._of.history_keys[self._of.history_index[self.id]]

    @property
    def valuation(self) -> tuple[object, ...]:
        """The values of the tracked context fields (`Exploration.tracked` order)."""
        return self._of.valuations[self._of.valuation_index[self.id]]

    @property
    def tracked(self) -> dict[str, object]:
        """Tracked context field → its value here (empty when none is tracked)."""
        return dict(zip(self._of.tracked, self.valuation, strict=True))

    @property
    def parent(self) -> int:
        """The node this one was first reached from (-1: the initial macrostep)."""
        return self._of.parent_index[self.id]

    @property
    def depth(self) -> int:
        """Events from the start (breadth-first: never less than the parent's)."""
        return self._of.depth_index[self.id]

    @property
    def via(self) -> MacrostepBranch:
        """The outcome that first reached this node."""
        of = self._of
        slot, parent = of.via_index[self.id], of.parent_index[self.id]
        if parent < 0:
            return of.initial[slot]
        return of.outcome_at(of.outcome_start[parent] + slot)

    @property
    def outcomes(self) -> list[MacrostepBranch] | None:
        """Every outcome of every event here (None when not expanded)."""
        return self._of.outcomes_of(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other._of is self._of and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Node({self.id}, {self.config!r})"


class Nodes(Sequence[Node]):
    """The abstract states of an exploration in breadth-first order, as `Node` views."""

    __slots__ = ("_of",)

    def __init__(self, exploration: Exploration) -> None:
        self._of = exploration

    def __len__(self) -> int:
        return len(self._of.config_index)

    @overload
    def __getitem__(self, index: int) -> Node: ...
    @overload
    def __getitem__(self, index: slice) -> list[Node]: ...
    def __getitem__(self, index: int | slice) -> Node | list[Node]:
        count = len(self._of.config_index)
        if isinstance(index, slice):
            return [Node(self._of, i) for i in range(*index.indices(count))]
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("node index out of range")
        return Node(self._of, index)

    def __iter__(self) -> Iterator[Node]:
        of = self._of
        for i in range(len(of.config_index)):
            yield Node(of, i)


@dataclass(frozen=True, slots=True)
class Limit:
    """A bound the exploration hit: `kind` is `configurations`, `memory`, `branching` or
    `loops` (a `foreach` that raises or sends, explored running its body at most once)."""

    kind: str
    message: str
    node: int | None = None
    event: str | None = None


@dataclass(frozen=True, slots=True)
class SeenConflict:
    """A conflict resolution the engine made that removed transitions (`conflict`), first
    seen in the macrostep of `event` from `node` (-1: the initial macrostep) under
    `assumptions`."""

    conflict: TransitionConflict
    node: int
    event: str | None
    assumptions: tuple[Assumption, ...]


class Exploration:
    """The reachable abstract states of a chart and every outcome between them.

    `nodes` are in breadth-first order (`depth` never decreases), so the first
    node with a property is one closest to the start. `complete` is False when
    a bound was hit (`limits` says which): absence claims (unreachable,
    dead, trap) are then not proven.
    """

    def __init__(
        self,
        chart: CompiledChart,
        tables: Tables,
        events: tuple[str, ...],
        max_configurations: int,
    ) -> None:
        self.chart = chart
        self.tables = tables
        self.events = events
        self.timer_events = tuple(t.name for t in chart.timers)
        """The chart's timer events; each occurs only where it is armed (a node's outcomes
        list it then, after the declared events)."""
        self.max_configurations = max_configurations
        self.initial: list[MacrostepBranch] = []
        self.limits: list[Limit] = []
        self.conflicts: list[SeenConflict] = []
        self.tracked: tuple[str, ...] = ()
        """The context fields whose values the abstract states carry (declaration order)."""
        self.tracking_notes: list[str] = []
        """Why a field that could be tracked was not (the bound on tracked values)."""
        self.initial_starts: list[dict[str, object]] = []
        """Per branch of `initial`, the start values of the tracked fields it was explored
        from that differ from the declared defaults (empty: the defaults)."""
        self.checks = 0
        self.seconds = 0.0
        self.reasoning: tuple[int, int, float] = (0, 0, 0.0)
        """(solver questions, of them undecided within the solver's budget, seconds they took):
        see `statekit.analysis.feasibility`; an undecided question keeps its run."""
        # The compact store (see the module docstring). Per abstract state, in arrays of
        # machine integers rather than objects: a Python object per state and outcome
        # would cost more than the whole state in this form.
        self.configs: list[tuple[int, ...]] = []
        """Interned configurations, as their sorted active state ids."""
        self.config_ids: dict[tuple[int, ...], int] = {}
        self._views: list[Configuration | None] = []
        self.histories: list[History] = [{}]
        self.history_keys: list[HistoryKey] = [()]
        self.history_ids: dict[HistoryKey, int] = {(): 0}
        self.valuations: list[tuple[object, ...]] = [()]
        self.valuation_ids: dict[tuple[object, ...], int] = {(): 0}
        self.config_index = array("i")
        self.history_index = array("i")
        self.valuation_index = array("i")
        self.parent_index = array("i")
        self.via_index = array("i")
        self.depth_index = array("i")
        self.outcome_start = array("q", [0])
        """Node i's outcomes are slots outcome_start[i] to outcome_start[i + 1] (for the
        nodes expanded so far, which are the first len(outcome_start) - 1)."""
        self.shared: list[MacrostepBranch] = []
        """Per outcome slot, the shared branch (its target aside when it fired)."""
        self.targets = array("i")
        """Per outcome slot, the target node (`NOWHERE`, `BEYOND`)."""
        # The outcomes of the nodes asked for last, built once: the rules ask for each
        # node's several times. Bounded, so that a large exploration keeps its compact
        # form (the cache starts over when full).
        self._outcomes: dict[int, tuple[MacrostepBranch, ...]] = {}
        self._tracked_nodes: TrackedNodes | None = None
        self.components: RegionComponents | None = None
        """The independent components, when the regions were explored compositionally
        (`statekit.analysis.compositional`); None for the full product."""
        self.component_tags = array("i")
        """Per node (compositional only), the component whose events it was expanded with
        (`EVERY`: all)."""

    def config_number(self, ordered: tuple[int, ...]) -> int:
        """The index of the configuration with these sorted state ids (interned when new)."""
        found = self.config_ids.get(ordered)
        if found is None:
            found = self.config_ids[ordered] = len(self.configs)
            self.configs.append(ordered)
            self._views.append(None)
        return found

    def history_number(self, history: History, key: HistoryKey) -> int:
        """The index of this recorded history (`key` its sorted items; interned when new)."""
        found = self.history_ids.get(key)
        if found is None:
            found = self.history_ids[key] = len(self.histories)
            self.histories.append(history)
            self.history_keys.append(key)
        return found

    def valuation_number(self, valuation: tuple[object, ...]) -> int:
        """The index of these tracked values (interned when new)."""
        key = tuple((type(v).__name__, v) for v in valuation)  # True and 1 differ
        found = self.valuation_ids.get(key)
        if found is None:
            found = self.valuation_ids[key] = len(self.valuations)
            self.valuations.append(valuation)
        return found

    def add_node(
        self, config: int, history: int, parent: int, via: int, depth: int, valuation: int = 0
    ) -> int:
        """A new abstract state (numbers as `config_number`/`history_number`/
        `valuation_number` give them), first reached by the outcome in slot `via` of
        `parent`'s (of `initial` when `parent` is -1); its id."""
        node_id = len(self.config_index)
        self.config_index.append(config)
        self.history_index.append(history)
        self.valuation_index.append(valuation)
        self.parent_index.append(parent)
        self.via_index.append(via)
        self.depth_index.append(depth)
        return node_id

    def add_outcome(self, branch: MacrostepBranch, target: int) -> None:
        """The next outcome of the node being expanded: a shared branch and its target."""
        self.shared.append(branch)
        self.targets.append(target)

    def end_outcomes(self) -> None:
        """The node being expanded (the next one in order) has all its outcomes."""
        self.outcome_start.append(len(self.targets))

    @property
    def nodes(self) -> Nodes:
        """The abstract states in breadth-first order (`Node` views)."""
        return Nodes(self)

    def config_at(self, index: int) -> Configuration:
        """The interned configuration number `index`, as an engine `Configuration` of
        `tables` (built on first use)."""
        views = self._views
        found = views[index]
        if found is None:
            found = views[index] = self.tables.configuration(frozenset(self.configs[index]))
        return found

    def outcome_at(self, slot: int) -> MacrostepBranch:
        """The outcome in `slot`, with its own target."""
        branch, target = self.shared[slot], self.targets[slot]
        if branch.target == target:
            return branch
        return _new(MacrostepBranch, (*branch[:2], target, *branch[3:]))

    def outcomes_of(self, node_id: int) -> list[MacrostepBranch] | None:
        """The outcomes of node `node_id` (None when it was not expanded)."""
        cached = self._outcomes.get(node_id)
        if cached is not None:
            return list(cached)
        starts = self.outcome_start
        if node_id + 1 >= len(starts):
            return None
        shared, targets = self.shared, self.targets
        out: list[MacrostepBranch] = []
        for slot in range(starts[node_id], starts[node_id + 1]):
            branch, target = shared[slot], targets[slot]
            if branch.target != target:
                branch = _new(MacrostepBranch, (*branch[:2], target, *branch[3:]))
            out.append(branch)
        if len(self._outcomes) >= OUTCOME_CACHE:
            self._outcomes.clear()
        self._outcomes[node_id] = tuple(out)
        return out

    @property
    def complete(self) -> bool:
        """Whether every reachable abstract state and every guard outcome was explored."""
        return not self.limits

    def event_order(self) -> dict[str, int]:
        """Declared events, then timer events, each mapped to its position."""
        return {name: i for i, name in enumerate((*self.events, *self.timer_events))}

    def path(self, node_id: int) -> list[tuple[int, MacrostepBranch]]:
        """The outcomes leading from the start to `node_id`, each with the node it left
        (-1 for the initial macrostep), first to last."""
        out: list[tuple[int, MacrostepBranch]] = []
        current = node_id
        while current >= 0:
            node = self.nodes[current]
            out.append((node.parent, node.via))
            current = node.parent
        out.reverse()
        return out

    @property
    def tracked_nodes(self) -> TrackedNodes:
        """What the tracked context values tell about the nodes (built on first use, once
        the exploration is done)."""
        if self._tracked_nodes is None or self._tracked_nodes.size != len(self.config_index):
            self._tracked_nodes = TrackedNodes(self)
        return self._tracked_nodes

    def configurations(self) -> list[Configuration]:
        """The distinct reachable configurations (history values aside), in BFS order."""
        return [self.config_at(i) for i in dict.fromkeys(self.config_index)]

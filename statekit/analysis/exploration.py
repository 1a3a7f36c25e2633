"""What an exploration found: the graph of reachable abstract states and the branches between them.

`statekit.analysis.explorer` builds an `Exploration`; the rules, `explain`
and `paths` read it. A `Node` is an abstract state (a configuration plus
recorded history values), a `MacrostepBranch` one result of one macrostep
under one set of data-guard assumptions, a `Limit` a bound the exploration
hit, a `SeenConflict` the first sighting of a conflict resolution that
removed transitions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from statekit.analysis.guards import Assumption
from statekit.compiler.ir import CompiledChart
from statekit.engine.macrostep_run import FailedGuard
from statekit.engine.result import Status
from statekit.engine.tables import Configuration, MicrostepPlan, Tables, TransitionConflict

NOWHERE = -1
"""`MacrostepBranch.target` when nothing fired (the state is unchanged)."""
BEYOND = -2
"""`MacrostepBranch.target` when the target was not explored (over `max_configurations`)."""

History = Mapping[int, tuple[int, ...]]
HistoryKey = tuple[tuple[int, tuple[int, ...]], ...]


class MacrostepBranch(NamedTuple):
    """One branch of an explored macrostep: its result under one set of assumptions.

    `event` is None for the initial macrostep. `target` is the node it leads
    to (`NOWHERE` when nothing fired, `BEYOND` past the bound). `steps` are
    the engine's microstep plans in order (transitions fired, states exited
    and entered). `basis` is `applied`, `livelock`, or the engine's
    classification basis (`already`, `guard`, `reject`, `terminal`,
    `undefined`) when nothing fired; `failed` the guard that failed first.

    A named tuple, not a frozen dataclass: the exploration builds one per
    abstract state, event and run, and in Python 3.11 a frozen dataclass
    costs ten times as much to construct (a third of the exploration time).
    """

    event: str | None
    assumptions: tuple[Assumption, ...]
    target: int
    steps: tuple[MicrostepPlan, ...]
    status: Status
    reason: str | None
    basis: str
    failed: FailedGuard | None = None

    @property
    def fired(self) -> bool:
        """Whether a transition fired (APPLIED)."""
        return self.basis == "applied"

    def transitions(self) -> tuple[int, ...]:
        """Every transition fired, microstep after microstep (none for a LIVELOCK, whose
        microsteps the engine rolls back)."""
        if not self.fired:
            return ()
        return tuple(t for plan in self.steps for t in plan.transitions)

    def __repr__(self) -> str:
        return (
            f"MacrostepBranch({self.event!r}, {self.basis}, {self.reason!r}, target={self.target})"
        )


class Node:
    """An abstract state: a configuration and history values, first reached by `via`
    from node `parent` (-1: by the initial macrostep), `depth` events from the start."""

    __slots__ = ("config", "depth", "history", "history_key", "id", "outcomes", "parent", "via")

    def __init__(
        self,
        node_id: int,
        config: Configuration,
        history: History,
        history_key: HistoryKey,
        parent: int,
        via: MacrostepBranch,
        depth: int,
    ) -> None:
        self.id = node_id
        self.config = config
        self.history = history
        self.history_key = history_key
        self.parent = parent
        self.via = via
        self.depth = depth
        self.outcomes: list[MacrostepBranch] | None = None


@dataclass(frozen=True, slots=True)
class Limit:
    """A bound the exploration hit: `kind` is `configurations`, `memory` or `branching`."""

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
        self.nodes: list[Node] = []
        self.initial: list[MacrostepBranch] = []
        self.limits: list[Limit] = []
        self.conflicts: list[SeenConflict] = []
        self.checks = 0
        self.seconds = 0.0

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

    def configurations(self) -> list[Configuration]:
        """The distinct reachable configurations (history values aside), in BFS order."""
        return list(dict.fromkeys(node.config for node in self.nodes))

"""Per-chart runtime tables: interned configurations and the caches of the hot path.

The compiled chart (IR) already holds what does not depend on the running
instance: ancestors, default entries, static transition domains and entry
sets, candidate lists per state and event. What depends on the configuration
is computed here once per configuration and then reused by every instance:

- `Tables.configuration(ids)` interns configurations, so that every `State`
  in a given configuration shares one `Configuration` object (ids, paths,
  atomic states, whether the chart is final);
- each `Configuration` caches (`ConfigurationCache`), per event, the candidate
  chains of its atomic states (`EventEntry`), the fixed selection when no
  candidate has a guard, the conflict-free subsets and the microstep plans
  (`MicrostepPlan`: exit and entry sets, new configuration, history records,
  effect segments);
- a plan depends only on (configuration, transitions), except when a
  transition targets a history state; such plans are not cached.

These are caches of the results of the SCXML procedures in
`statekit.engine.algorithm`, `selection` and `transition_sets`, never a second
implementation of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from statekit.compiler.event_meta_reads import reads_event_meta
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.invariant_ir import ExpressionInvariant, StateInvariant
from statekit.compiler.ir import CompiledChart, Effect, StateKind, StateNode, Transition
from statekit.engine.evidence import FiredTransition
from statekit.engine.timers import ArmTimers, CancelTimers
from statekit.engine.validation import EMPTY, PayloadValidator

__all__ = [
    "EMPTY",
    "Configuration",
    "ConfigurationCache",
    "ConflictLoss",
    "DependsOnData",
    "EffectSegment",
    "EventEntry",
    "MemoisedMacrostep",
    "MicrostepPlan",
    "NoCandidates",
    "StaticLivelock",
    "StaticMacrostep",
    "Tables",
    "TablesOwner",
    "TimedEffect",
    "TransitionConflict",
]

DEFAULT_MAX_MICROSTEPS = 1000
"""Microsteps one macrostep may take before it is rejected as LIVELOCK."""


@dataclass(frozen=True, slots=True)
class EventEntry:
    """Selection inputs for one event in one configuration.

    `chains[i]` lists, in selection order, the candidate transitions of the
    i-th atomic state (document order) that has any. `fixed` is the selected,
    conflict-free transition ids when no candidate has a guard (so the
    selection never changes); None when guards must be evaluated. `conflict`
    is the conflict resolution that made `fixed`, when it removed a transition.
    """

    chains: tuple[tuple[Transition, ...], ...]
    fixed: tuple[int, ...] | None
    conflict: TransitionConflict | None


@dataclass(frozen=True, slots=True)
class ConflictLoss:
    """One transition conflict resolution dropped because of one it kept: the states both
    would exit (never empty), and whether only document order decided (neither source
    is a descendant of the other)."""

    kept: int
    dropped: int
    common_exits: frozenset[int]
    by_document_order: bool


@dataclass(frozen=True, slots=True)
class TransitionConflict:
    """A conflict resolution (SCXML removeConflictingTransitions) that removed transitions:
    in `configuration`, of the `enabled` transition ids it `kept` some, and `losses`
    pairs each dropped transition with every kept one whose exit set meets its own."""

    configuration: Configuration
    enabled: tuple[int, ...]
    kept: tuple[int, ...]
    losses: tuple[ConflictLoss, ...]


TimedEffect = Effect | ArmTimers | CancelTimers
"""An effect of a plan: the chart's own, or the engine's arming (after a state's entry
effects) and cancelling (after its exit effects) of a state's `after` timers."""


@dataclass(frozen=True, slots=True)
class EffectSegment:
    """Effects to run, the active state ids they see, and the done events raised after them
    (the first with the payload `output` gives, when the final state has one)."""

    effects: tuple[TimedEffect, ...]
    active: frozenset[int]
    done: tuple[str, ...]
    output: tuple[tuple[str, Expression], ...] = ()
    """The entered final state's `output:`: the payload of `done[0]`."""


@dataclass(frozen=True, slots=True)
class MicrostepPlan:
    """Everything one microstep does that depends only on (configuration, transitions).

    `segments` interleave exit effects (exit order), transition effects
    (selection order) and entry effects (entry order), each with the
    configuration as SCXML has it at that point, and the `done.state.*`
    events raised when a final state is entered.
    """

    transitions: tuple[int, ...]
    exit_order: tuple[int, ...]
    entry_order: tuple[int, ...]
    target: Configuration
    history_updates: tuple[tuple[int, tuple[int, ...]], ...]
    segments: tuple[EffectSegment, ...]
    exited: tuple[str, ...]
    entered: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StaticMacrostep:
    """A macrostep that depends on nothing but (configuration, event): where it ends, its
    plans (the event's microstep first, then eventless ones) and the conflict
    resolutions of its selections that removed a transition."""

    target: Configuration
    plans: tuple[MicrostepPlan, ...]
    conflicts: tuple[TransitionConflict, ...]


@dataclass(frozen=True, slots=True)
class StaticLivelock:
    """A macrostep that depends on nothing but (configuration, event) and does not settle.

    `plans` are the `Tables.max_microsteps` microsteps it takes before the one
    over the bound; `message` is the `LivelockError` message `macrostep` gives;
    `conflicts` as in `StaticMacrostep`.
    """

    plans: tuple[MicrostepPlan, ...]
    message: str
    conflicts: tuple[TransitionConflict, ...]


@dataclass(frozen=True, slots=True)
class NoCandidates:
    """No active state (nor an ancestor) has a transition for the event: nothing fires,
    whatever the data."""

    conflicts: tuple[TransitionConflict, ...] = ()


@dataclass(frozen=True, slots=True)
class DependsOnData:
    """The macrostep reads a guard, runs an effect or records history: only the general
    macrostep can tell. `conflicts` are those of its data-free selections up to there."""

    conflicts: tuple[TransitionConflict, ...]


Resolution = tuple[tuple[int, ...], TransitionConflict | None]
"""A cached conflict resolution: the ids kept, and the conflict when it removed some."""
MemoisedMacrostep = StaticMacrostep | StaticLivelock | NoCandidates | DependsOnData
"""What the memo of data-free macrosteps (`statekit.engine.memo`) knows of (configuration,
event)."""


class ConfigurationCache:
    """What the engine remembers about one configuration (results only, never state).

    `events` and `eventless` hold the selection inputs (`EventEntry`) per
    event; `plans` the microstep plans per transition set; `conflicts` the
    conflict resolutions per enabled set; `memo` the verdicts of the memo of
    data-free macrosteps (`statekit.engine.memo`), `abstract_memo` the static
    analysis's variant of them; `single` the compiled macrosteps of static structure
    per transition set (`statekit.engine.compiled_macrostep`, or False); `choices` the
    compiled selections per event that reads data (`statekit.engine.compiled_choice`, or
    False); `fused` the general path of an event fused into one function per event
    (`statekit.engine.compiled_event`, or False); `verdicts` the static part
    of classifying an event nothing fired for; `broken_state_invariants` the
    state-form invariants broken here (None until computed). Read and written
    only by the engine's own modules.
    """

    __slots__ = (
        "abstract_memo",
        "broken_state_invariants",
        "choices",
        "conflicts",
        "eventless",
        "events",
        "fused",
        "memo",
        "plans",
        "single",
        "verdicts",
    )

    def __init__(self) -> None:
        self.events: dict[str, EventEntry] = {}
        self.eventless: EventEntry | None = None
        self.plans: dict[tuple[int, ...], MicrostepPlan] = {}
        self.conflicts: dict[tuple[int, ...], Resolution] = {}
        self.verdicts: dict[str, tuple[bool, str | None, int]] = {}
        self.memo: dict[str, MemoisedMacrostep] = {}
        self.abstract_memo: dict[str, MemoisedMacrostep] = {}
        self.broken_state_invariants: frozenset[str] | None = None
        self.single: dict[tuple[int, ...], Any] = {}
        self.choices: dict[str, Any] = {}
        self.fused: dict[str, Any] = {}


class Configuration:
    """An interned set of active states (ancestors included, the root excluded).

    `final` tells whether the chart is final here: the root's active child is
    a final state, or (parallel root) every region is in a final state.
    `cache` is what the engine remembers about it (`ConfigurationCache`).
    """

    __slots__ = ("atomic", "cache", "final", "final_states", "ids", "ordered", "paths", "tables")

    def __init__(self, tables: Tables, ids: frozenset[int]) -> None:
        states = tables.states
        self.tables = tables
        self.ids = ids
        self.ordered = tuple(sorted(ids))
        self.atomic = tuple(s for s in self.ordered if states[s].is_atomic)
        self.paths = frozenset(states[s].path for s in ids)
        self.final_states = tuple(s for s in self.atomic if states[s].kind is StateKind.FINAL)
        self.final = is_in_final_state(states, 0, ids)
        self.cache = ConfigurationCache()

    def __repr__(self) -> str:
        return f"Configuration({sorted(self.paths)!r})"


def is_in_final_state(states: tuple[StateNode, ...], state: int, active: frozenset[int]) -> bool:
    """SCXML isInFinalState: a compound state whose active child is final, or a
    parallel state whose children are all in a final state (the root counts too)."""
    node = states[state]
    if node.kind is StateKind.COMPOUND:
        # Through the active states, not the children: a root of thousands of children
        # would make every new configuration cost as much as the chart is large.
        return any(states[c].parent == state and states[c].kind is StateKind.FINAL for c in active)
    if node.kind is StateKind.PARALLEL:
        return all(is_in_final_state(states, c, active) for c in node.children)
    return node.kind is StateKind.FINAL and state in active


class Tables:
    """The runtime tables of one compiled chart (see the module docstring)."""

    def __init__(self, chart: CompiledChart, max_microsteps: int = DEFAULT_MAX_MICROSTEPS) -> None:
        if max_microsteps < 1:
            raise ValueError("max_microsteps must be at least 1")
        self.chart = chart
        self.states = chart.states
        self.transitions = chart.transitions
        self.digest = chart.digest
        self.max_microsteps = max_microsteps
        self.expression_invariants = tuple(
            i for i in chart.invariants if isinstance(i, ExpressionInvariant)
        )
        self.state_invariants = tuple(i for i in chart.invariants if isinstance(i, StateInvariant))
        self.secret_context, self.secret_payload = secret_fields(chart)
        self.validators = {name: PayloadValidator(e) for name, e in chart.events.items()}
        self.payload_defaults: dict[str, Mapping[str, Any]] = {
            name: {f.name: f.default for f in e.fields if f.has_default}
            for name, e in chart.events.items()
        }
        self.history_targeting = frozenset(t.id for t in chart.transitions if t.targets_history)
        self.reads_event_meta = reads_event_meta(chart)
        self.raises_evaluation_errors = chart.raises_evaluation_errors
        """`on_evaluation_error: raise`: evaluation errors raise `error.execution`."""
        """Whether expressions are evaluated with each event's `EventPayload` (`_event`)."""
        self._configurations: dict[frozenset[int], Configuration] = {}
        self._fired: dict[int, FiredTransition] = {}
        self._fired_sets: dict[tuple[int, ...], tuple[FiredTransition, ...]] = {}

    def configuration(self, ids: frozenset[int]) -> Configuration:
        """The interned configuration with exactly these active state ids."""
        found = self._configurations.get(ids)
        if found is None:
            found = self._configurations[ids] = Configuration(self, ids)
        return found

    def forget_configurations(self) -> None:
        """Forget every interned configuration and empty what each caches.

        For a caller that interned many configurations it will not ask about again
        (the static analysis, between stretches of its search). The caches refer to
        one another (a plan to its target configuration, each configuration to these
        tables), so without this only the cyclic garbage collector could free them. A
        configuration still held elsewhere stays valid and fills a new cache.
        """
        for config in self._configurations.values():
            config.cache = ConfigurationCache()
        self._configurations.clear()

    def fired(self, transition: int) -> FiredTransition:
        """The evidence record of a transition (built once per chart)."""
        found = self._fired.get(transition)
        if found is None:
            t = self.transitions[transition]
            found = self._fired[transition] = FiredTransition(
                t.id,
                self.states[t.source].path,
                tuple(self.states[x].path for x in t.targets),
                t.event,
                t.kind.value,
            )
        return found

    def fired_all(self, transitions: tuple[int, ...]) -> tuple[FiredTransition, ...]:
        """The evidence records of a microstep's transitions, in order (built once per set)."""
        found = self._fired_sets.get(transitions)
        if found is None:
            found = self._fired_sets[transitions] = tuple(self.fired(t) for t in transitions)
        return found

    def broken_state_invariants(self, config: Configuration) -> frozenset[str]:
        """The names of the state-form invariants this configuration breaks (cached)."""
        cached = config.cache.broken_state_invariants
        if cached is None:
            active = config.ids
            cached = config.cache.broken_state_invariants = frozenset(
                inv.name
                for inv in self.state_invariants
                if all(w in active for w in inv.when)
                and not (
                    all(r in active for r in inv.require)
                    and not any(f in active for f in inv.forbid)
                )
            )
        return cached


class TablesOwner(Protocol):
    """Anything that carries the runtime tables of a chart (a `Chart`)."""

    @property
    def tables(self) -> Tables:
        """The runtime tables."""
        ...


def secret_fields(chart: CompiledChart) -> tuple[frozenset[str], Mapping[str, frozenset[str]]]:
    """Context fields and payload fields (per event) whose values evidence must redact.

    The compiler computes them (`CompiledChart.redacted`): declared secrets and
    every field filled from one.
    """
    return chart.redacted.context, chart.redacted.payload

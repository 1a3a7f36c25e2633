"""The compiled chart (IR): immutable tables that the engine, analysis and diagrams read.

States have integer ids in document order (pre-order, the root is 0), so that
"document order" and "entry order" are both "ascending id", exit order is
"descending id", and the descendants of a state are exactly the ids in
`(state.id, state.last_descendant]`. Nothing here points back up to an
object: parents, children and targets are ids, so there are no cycles.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.effect_ir import Assign as Assign
from statekit.compiler.effect_ir import Cancel as Cancel
from statekit.compiler.effect_ir import Conditional as Conditional
from statekit.compiler.effect_ir import ConditionalBranch as ConditionalBranch
from statekit.compiler.effect_ir import Effect as Effect
from statekit.compiler.effect_ir import Emit as Emit
from statekit.compiler.effect_ir import Foreach as Foreach
from statekit.compiler.effect_ir import GuardCheck as GuardCheck
from statekit.compiler.effect_ir import Pause as Pause
from statekit.compiler.effect_ir import Raise as Raise
from statekit.compiler.effect_ir import Resume as Resume
from statekit.compiler.effect_ir import Send as Send
from statekit.compiler.effect_ir import TimerControl as TimerControl
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.expressions.named import NamedExpression
from statekit.compiler.invariant_ir import ExpressionInvariant as ExpressionInvariant
from statekit.compiler.invariant_ir import Invariant
from statekit.compiler.invocations import Invocation
from statekit.compiler.migration_ir import MigrationDecl
from statekit.compiler.race_ir import Producer as Producer
from statekit.compiler.race_ir import RaceDecision as RaceDecision
from statekit.compiler.value_types import ValueType

EMPTY_MAPPING: Mapping[str, tuple[int, ...]] = MappingProxyType({})


class StateKind(enum.Enum):
    """What a state node is."""

    ATOMIC = "atomic"
    COMPOUND = "compound"
    PARALLEL = "parallel"
    FINAL = "final"
    HISTORY = "history"


class HistoryKind(enum.Enum):
    """Shallow history remembers the active child; deep history the active atomic descendants."""

    SHALLOW = "shallow"
    DEEP = "deep"


class TransitionKind(enum.Enum):
    """Where a transition came from: `on`, `always` or `done`."""

    EVENT = "event"
    ALWAYS = "always"
    DONE = "done"


class TimerKind(enum.Enum):
    """How an `after` entry gives its due time."""

    AFTER = "after"  # a literal delay
    DELAY = "delay"  # `delay: expr`, milliseconds, evaluated when the state is entered
    AT = "at"  # `at: expr`, an absolute time in epoch milliseconds, evaluated on entry


@dataclass(frozen=True, slots=True)
class TimerDecl:
    """A timer owned by a state (one `after` entry, or several with the same name).

    `name` is its timer event's name and its identity: `after(<normalised
    literal>)@<state path>`, `after(<expression source>)@<path>` for `delay:`,
    `at(<expression source>)@<path>` for `at:`; a timer named with `id:` is
    `after(<id>)@<path>` (`at(<id>)@<path>` for `at:`) whatever its delay (`label` is
    the id). Its transitions are ordinary event transitions on that name.
    `delay_ms` is set for kind AFTER only, `expression` (integer, over `ctx`, no
    `event`) for DELAY and AT only. `span` is the first entry's key or list item.
    """

    id: int
    name: str
    state: int
    kind: TimerKind
    delay_ms: int | None
    expression: Expression | None
    span: SourceSpan
    label: str | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """A compiled transition; `targets` empty means targetless (no exit, no entry).

    `domain` is the SCXML transition domain when it is static (None for a
    targetless transition or one that targets a history state), and
    `entry_set` the states it enters (ascending ids) when that is static too.
    """

    id: int
    source: int
    kind: TransitionKind
    event: str | None
    targets: tuple[int, ...]
    guards: tuple[GuardCheck, ...]
    effects: tuple[Effect, ...]
    description: str | None
    span: SourceSpan
    targets_history: bool
    domain: int | None
    entry_set: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class ClassifiedEvent:
    """An `already` entry (reason None) or a `reject` entry (event may be `*`)."""

    event: str
    reason: str | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class StateNode:
    """A state, region, final state or history pseudo-state.

    `path` is the dotted path from the root (`lifecycle.running`; the root's
    path is ""). `initial` holds the default-entry targets of a compound state.
    `default_entry` is every state entered when this one is entered by
    default (itself and its initial descendants, all regions of a parallel
    state), in entry order. `invocations` are the child charts the state
    invokes while active (`invoke:`, in document order); `output` the chart's
    output fields when this top-level final state is reached (`output:`).
    """

    id: int
    name: str
    path: str
    kind: StateKind
    parent: int | None
    children: tuple[int, ...]
    history_children: tuple[int, ...]
    depth: int
    ancestors: tuple[int, ...]
    last_descendant: int
    initial: tuple[int, ...]
    default_entry: tuple[int, ...]
    history: HistoryKind | None
    history_default: tuple[int, ...]
    entry: tuple[Effect, ...]
    exit: tuple[Effect, ...]
    transitions: tuple[int, ...]
    already: tuple[ClassifiedEvent, ...]
    reject: tuple[ClassifiedEvent, ...]
    description: str | None
    span: SourceSpan
    timers: tuple[int, ...] = ()
    invocations: tuple[Invocation, ...] = ()
    output: tuple[tuple[str, Expression], ...] = ()

    @property
    def is_atomic(self) -> bool:
        """Atomic or final: a leaf of the configuration."""
        return self.kind in (StateKind.ATOMIC, StateKind.FINAL)

    def contains(self, other: int) -> bool:
        """Whether `other` is a proper descendant of this state."""
        return self.id < other <= self.last_descendant


@dataclass(frozen=True, slots=True)
class FieldDecl:
    """A typed context or payload field; `has_default` tells optional payload fields."""

    name: str
    type: ValueType
    default: Any
    """A scalar, or for a list field a list of its items' values (never mutated)."""
    has_default: bool
    secret: bool
    description: str | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class EventDecl:
    """A declared event and its payload fields (in declaration order)."""

    name: str
    fields: tuple[FieldDecl, ...]
    span: SourceSpan

    def field_types(self) -> dict[str, ValueType]:
        """Field name → type."""
        return {f.name: f.type for f in self.fields}


@dataclass(frozen=True, slots=True)
class GuardDecl:
    """A named guard as declared (its expression source; it is compiled per event where used)."""

    name: str
    source: str
    reason: str
    description: str | None
    span: SourceSpan
    if_span: SourceSpan


@dataclass(frozen=True, slots=True)
class LintSettings:
    """The chart's own `lint:` key: slugs to ignore and per-slug severities."""

    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()
    span: SourceSpan | None = None
    slug_spans: tuple[tuple[str, SourceSpan], ...] = ()


@dataclass(frozen=True, slots=True)
class RedactedFields:
    """The fields whose values evidence, logs and `repr(state)` show as `REDACTED`.

    `context` and `payload` (event name → field names) hold the fields declared
    `secret: true` and every field filled from one by an `assign` or a `raise`.
    Derived from the rest of the IR, so not part of its JSON form or digest.
    """

    context: frozenset[str] = frozenset()
    payload: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class CompiledChart:
    """An immutable, serialisable compiled statechart.

    `candidates[state_id][event]` lists, in selection order, the ids of the
    event transitions of that state and then of its ancestors (the first
    enabled one is selected); `eventless[state_id]` does the same for
    `always`/`done` transitions. `digest` is the sha256 of the canonical
    form without positions and descriptions: it identifies the chart version.
    `redacted` names the fields whose values evidence must not show.
    `idempotency` maps an event to the payload fields that identify its fact
    (the chart's `idempotency:`; the runner keeps (event, key values) unique).
    `timers` are the `after` timers in document order (`StateNode.timers` holds
    each state's ids); their events are not in `events`. `definitions` (`define:`) and
    `tables` (`tables:`) are kept for tools: every use is already inlined in its tree.
    `invocations` are every state's `invoke:` entries in document order; each one's
    `done.invoke.<id>` and `error.invoke.<id>` are in `events`.
    """

    name: str
    version: int
    description: str | None
    file: str
    states: tuple[StateNode, ...]
    transitions: tuple[Transition, ...]
    events: Mapping[str, EventDecl]
    context: Mapping[str, FieldDecl]
    guards: Mapping[str, GuardDecl]
    invariants: tuple[Invariant, ...]
    candidates: tuple[Mapping[str, tuple[int, ...]], ...]
    eventless: tuple[tuple[int, ...], ...]
    path_index: Mapping[str, int]
    lint: LintSettings
    span: SourceSpan
    redacted: RedactedFields = field(default_factory=RedactedFields)
    idempotency: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    migrations: tuple[MigrationDecl, ...] = ()
    digest: str = field(default="")
    producers: tuple[Producer, ...] = ()
    races: tuple[RaceDecision, ...] = ()
    timers: tuple[TimerDecl, ...] = ()
    definitions: Mapping[str, NamedExpression] = field(default_factory=lambda: MappingProxyType({}))
    tables: Mapping[str, LookupTable] = field(default_factory=lambda: MappingProxyType({}))
    invocations: tuple[Invocation, ...] = ()
    raises_evaluation_errors: bool = False
    """`on_evaluation_error: raise`: a failing expression raises `error.execution`."""
    _timer_index: Mapping[str, TimerDecl] = field(
        init=False, repr=False, compare=False, default_factory=lambda: MappingProxyType({})
    )

    def __post_init__(self) -> None:
        if self.timers:  # built once: the engine asks by name on every timer delivery
            index = MappingProxyType({t.name: t for t in self.timers})
            object.__setattr__(self, "_timer_index", index)

    def timer(self, name: str) -> TimerDecl | None:
        """The timer whose timer event is `name`, or None (then `name` is no timer event)."""
        return self._timer_index.get(name)

    def invocation(self, invoke_id: str) -> Invocation | None:
        """The invocation with this id, or None."""
        for invocation in self.invocations:
            if invocation.id == invoke_id:
                return invocation
        return None

    def migration_from(self, version: int) -> MigrationDecl | None:
        """The declared migration from `version`, or None (then paths map to themselves)."""
        for migration in self.migrations:
            if migration.from_version == version:
                return migration
        return None

    @property
    def root(self) -> StateNode:
        """The root state (id 0)."""
        return self.states[0]

    def state(self, path: str) -> StateNode:
        """The state with this full dotted path (KeyError if none)."""
        return self.states[self.path_index[path]]

"""The resolved model frozen into the immutable IR, with the tables the engine's hot path needs.

Precomputed here: ancestors and last descendants, default entry sets,
transition domains and entry sets (where no history is targeted), the
candidate transitions per state and event, and the chart's digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from statekit.compiler import scxml_procedures
from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.expressions.named import NamedExpression
from statekit.compiler.invariant_ir import Invariant
from statekit.compiler.invocations import Invocation
from statekit.compiler.ir import (
    ClassifiedEvent,
    CompiledChart,
    Effect,
    EventDecl,
    FieldDecl,
    GuardCheck,
    GuardDecl,
    HistoryKind,
    LintSettings,
    Producer,
    RaceDecision,
    StateKind,
    StateNode,
    TimerDecl,
    Transition,
    TransitionKind,
)
from statekit.compiler.migration_ir import MigrationDecl
from statekit.compiler.model.declarations import text
from statekit.compiler.model.evaluation_errors import raises_evaluation_errors
from statekit.compiler.model.numbering import StateDraft
from statekit.compiler.model.redaction import redacted_fields
from statekit.compiler.serialize import chart_digest
from statekit.compiler.source.nodes import MappingNode, ScalarNode


@dataclass(frozen=True, slots=True)
class TransitionDraft:
    """A transition as pass 2 resolved it; freezing adds its domain and entry set."""

    source: int
    kind: TransitionKind
    event: str | None
    targets: tuple[int, ...]
    guards: tuple[GuardCheck, ...]
    effects: tuple[Effect, ...]
    description: str | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class StateBody:
    """What pass 2 compiled for one state: its entry and exit effects, its already and reject."""

    entry: tuple[Effect, ...] = ()
    exit: tuple[Effect, ...] = ()
    already: tuple[ClassifiedEvent, ...] = ()
    reject: tuple[ClassifiedEvent, ...] = ()
    timers: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """A chart with every reference resolved and every expression compiled, not yet frozen.

    `bodies` has an entry for every state that is not a history pseudo-state.
    """

    name: str
    file: str
    root: MappingNode
    drafts: tuple[StateDraft, ...]
    transitions: tuple[TransitionDraft, ...]
    bodies: Mapping[int, StateBody]
    events: Mapping[str, EventDecl]
    context: Mapping[str, FieldDecl]
    guards: Mapping[str, GuardDecl]
    invariants: tuple[Invariant, ...]
    lint: LintSettings
    producers: tuple[Producer, ...] = ()
    races: tuple[RaceDecision, ...] = ()
    idempotency: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    migrations: tuple[MigrationDecl, ...] = ()
    timers: tuple[TimerDecl, ...] = ()
    definitions: Mapping[str, NamedExpression] = field(default_factory=lambda: MappingProxyType({}))
    tables: Mapping[str, LookupTable] = field(default_factory=lambda: MappingProxyType({}))
    invocations: tuple[Invocation, ...] = ()
    outputs: Mapping[int, tuple[tuple[str, Expression], ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )


def freeze(model: ResolvedModel) -> CompiledChart:
    """The immutable IR of a resolved model, its engine tables and digest included."""
    states = _states(model.drafts, model.bodies, model.invocations, model.outputs)
    transitions = _transitions(states, model.transitions)
    candidates, eventless = _selection_tables(states, transitions)
    version_node = model.root.get("version")
    version = version_node.value if isinstance(version_node, ScalarNode) else 1
    chart = CompiledChart(
        name=model.name,
        version=version if isinstance(version, int) else 1,
        description=text(model.root.get("description")),
        file=model.file,
        states=tuple(states),
        transitions=tuple(transitions),
        events=MappingProxyType(dict(model.events)),
        context=MappingProxyType(dict(model.context)),
        guards=MappingProxyType(dict(model.guards)),
        invariants=model.invariants,
        candidates=candidates,
        eventless=eventless,
        path_index=MappingProxyType({s.path: s.id for s in states}),
        lint=model.lint,
        span=model.root.span,
        redacted=redacted_fields(model.context, model.events, states, transitions),
        producers=model.producers,
        races=model.races,
        idempotency=MappingProxyType(dict(model.idempotency)),
        migrations=model.migrations,
        timers=model.timers,
        definitions=model.definitions,
        tables=model.tables,
        invocations=model.invocations,
        raises_evaluation_errors=raises_evaluation_errors(model.root),
    )
    return replace(chart, digest=chart_digest(chart))


def _states(
    drafts: tuple[StateDraft, ...],
    bodies: Mapping[int, StateBody],
    invocations: tuple[Invocation, ...],
    outputs: Mapping[int, tuple[tuple[str, Expression], ...]],
) -> list[StateNode]:
    last = [0] * len(drafts)
    for draft in reversed(drafts):
        last[draft.id] = max(
            [draft.id, *(last[c] for c in draft.children + draft.history_children)]
        )
    no_body = StateBody()
    states: list[StateNode] = []
    for d in drafts:
        ancestors: list[int] = []
        parent = d.parent
        while parent is not None:
            ancestors.append(parent)
            parent = drafts[parent].parent
        body = bodies.get(d.id, no_body)
        history_text = text(d.node.get("history"))
        states.append(
            StateNode(
                id=d.id,
                name=d.name,
                path=d.path,
                kind=d.kind,
                parent=d.parent,
                children=tuple(d.children),
                history_children=tuple(d.history_children),
                depth=d.depth,
                ancestors=tuple(ancestors),
                last_descendant=last[d.id],
                initial=d.initial,
                default_entry=(),
                history=HistoryKind(history_text) if history_text else None,
                history_default=d.history_default,
                entry=body.entry,
                exit=body.exit,
                transitions=tuple(d.transitions),
                already=body.already,
                reject=body.reject,
                description=text(d.node.get("description")),
                span=d.span,
                timers=body.timers,
                invocations=tuple(i for i in invocations if i.state == d.id) if invocations else (),
                output=outputs.get(d.id, ()),
            )
        )
    return [
        replace(s, default_entry=scxml_procedures.default_entry(states, s.id))
        if s.kind is not StateKind.HISTORY
        else s
        for s in states
    ]


def _transitions(states: list[StateNode], drafts: tuple[TransitionDraft, ...]) -> list[Transition]:
    transitions: list[Transition] = []
    no_history = scxml_procedures.no_history
    for tid, t in enumerate(drafts):
        targets_history = any(states[x].kind is StateKind.HISTORY for x in t.targets)
        domain = entry_set = None
        if t.targets and not targets_history:
            domain = scxml_procedures.transition_domain(states, t.source, t.targets, no_history)
            entry_set = scxml_procedures.entry_set(states, t.targets, domain, no_history)
        transitions.append(
            Transition(
                id=tid,
                source=t.source,
                kind=t.kind,
                event=t.event,
                targets=t.targets,
                guards=t.guards,
                effects=t.effects,
                description=t.description,
                span=t.span,
                targets_history=targets_history,
                domain=domain,
                entry_set=entry_set,
            )
        )
    return transitions


def _selection_tables(
    states: list[StateNode], transitions: list[Transition]
) -> tuple[tuple[Mapping[str, tuple[int, ...]], ...], tuple[tuple[int, ...], ...]]:
    """Per state: event → candidate transitions of it and its ancestors, in selection order."""
    own: list[dict[str, list[int]]] = [{} for _ in states]
    own_always: list[list[int]] = [[] for _ in states]
    for t in transitions:
        if t.kind is TransitionKind.ALWAYS:
            own_always[t.source].append(t.id)
        elif t.event is not None:
            own[t.source].setdefault(t.event, []).append(t.id)
    candidates: list[Mapping[str, tuple[int, ...]]] = []
    eventless: list[tuple[int, ...]] = []
    for s in states:
        chain = (s.id, *s.ancestors)
        table: dict[str, list[int]] = {}
        for state_id in chain:
            for event, ids in own[state_id].items():
                table.setdefault(event, []).extend(ids)
        candidates.append(MappingProxyType({e: tuple(ids) for e, ids in table.items()}))
        eventless.append(tuple(t for state_id in chain for t in own_always[state_id]))
    return tuple(candidates), tuple(eventless)

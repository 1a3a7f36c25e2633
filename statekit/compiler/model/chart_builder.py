"""Model → IR: the two compiler passes after loading and schema validation.

Pass 1 numbers every state in document order and records its path and kind.
Pass 2 resolves references, compiles expressions and effects, and then the
tables the engine's hot path needs are precomputed (ancestors, default entry
sets, transition domains and entry sets, candidate lists per state and event).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from statekit.compiler import scxml_procedures
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.ir import (
    ClassifiedEvent,
    CompiledChart,
    EventDecl,
    ExpressionInvariant,
    FieldDecl,
    GuardCheck,
    GuardDecl,
    HistoryKind,
    Invariant,
    LintSettings,
    StateInvariant,
    StateKind,
    StateNode,
    Transition,
    TransitionKind,
)
from statekit.compiler.model.declarations import (
    DEFAULT_GUARD_REASON,
    mapping_items,
    parse_events,
    parse_fields,
    parse_guards,
    scalar_list,
    text,
)
from statekit.compiler.model.effect_compiler import EffectCompiler
from statekit.compiler.model.state_index import StateIndex
from statekit.compiler.rules import (
    invalid_initial,
    invalid_target,
    unknown_event,
    unknown_guard,
    unknown_state,
)
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.serialize import chart_digest
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import BOOLEAN

HISTORY_KEYS = frozenset({"history", "default", "description"})


@dataclass
class _Draft:
    """A state during compilation (mutable; frozen into a StateNode at the end)."""

    id: int
    name: str
    path: str
    kind: StateKind
    parent: int | None
    depth: int
    node: MappingNode
    span: SourceSpan
    children: list[int] = field(default_factory=list)
    history_children: list[int] = field(default_factory=list)
    initial: tuple[int, ...] = ()
    history_default: tuple[int, ...] = ()
    transitions: list[int] = field(default_factory=list)


@dataclass
class _TransitionDraft:
    source: int
    kind: TransitionKind
    event: str | None
    targets: tuple[int, ...]
    guards: tuple[GuardCheck, ...]
    effects: tuple[object, ...]
    description: str | None
    span: SourceSpan


def _kind_of(node: MappingNode, is_root: bool) -> StateKind:
    if not is_root and node.get("history") is not None:
        return StateKind.HISTORY
    if not is_root and isinstance(node.get("final"), ScalarNode):
        return StateKind.FINAL
    parallel = node.get("parallel")
    if isinstance(parallel, ScalarNode) and parallel.value is True:
        return StateKind.PARALLEL
    if node.get("states") is not None:
        return StateKind.COMPOUND
    return StateKind.ATOMIC


class ChartBuilder:
    """Builds a `CompiledChart` from a schema-valid positioned tree, collecting diagnostics."""

    def __init__(self, root: MappingNode, file: str) -> None:
        self.root_node = root
        self.file = file
        self.problems: list[Diagnostic] = []
        self.drafts: list[_Draft] = []
        self.transitions: list[_TransitionDraft] = []
        self.context: dict[str, FieldDecl] = {}
        self.events: dict[str, EventDecl] = {}
        self.guards: dict[str, GuardDecl] = {}
        self.index = StateIndex(())
        self._guard_cache: dict[tuple[str, str | None], Expression | None] = {}
        self.used_guards: set[str] = set()

    # ---- pass 1: states in document order -------------------------------------------
    def _add_state(
        self, name: str, node: MappingNode, parent: _Draft | None, span: SourceSpan
    ) -> None:
        """Number a state (its span is its key's, where a reader looks for it)."""
        path = name if parent is None or parent.parent is None else f"{parent.path}.{name}"
        if parent is None:
            path = ""
        draft = _Draft(
            id=len(self.drafts),
            name=name,
            path=path,
            kind=_kind_of(node, parent is None),
            parent=None if parent is None else parent.id,
            depth=0 if parent is None else parent.depth + 1,
            node=node,
            span=span,
        )
        self.drafts.append(draft)
        if parent is not None:
            if draft.kind is StateKind.HISTORY:
                parent.history_children.append(draft.id)
            else:
                parent.children.append(draft.id)
        self._check_shape(draft)
        for key, child in mapping_items(node.get("states")):
            if isinstance(child, MappingNode):
                self._add_state(str(key.value), child, draft, key.span)
            elif isinstance(child, ScalarNode) and child.value is None:
                # `idle:` with nothing under it is an atomic state with no keys.
                self._add_state(str(key.value), MappingNode((), child.span), draft, key.span)

    def _check_shape(self, draft: _Draft) -> None:
        node = draft.node
        if draft.kind is StateKind.HISTORY:
            extra = [k for k in node.items if k[0].value not in HISTORY_KEYS]
            for key, _ in extra:
                self._error(
                    schema_rule.SLUG,
                    f"history state '{draft.path}' may only have history, default and "
                    f"description, not '{key.value}'",
                    key.span,
                )
            if draft.depth <= 1:
                self._error(
                    schema_rule.SLUG,
                    f"history state '{draft.path}' must be inside a compound or parallel "
                    "state (the root is never exited, so it has no history)",
                    node.span,
                )
        elif draft.kind is StateKind.FINAL:
            for forbidden in ("states", "initial", "parallel"):
                key_node = node.key_node(forbidden)
                if key_node is not None:
                    self._error(
                        schema_rule.SLUG,
                        f"final state '{draft.path}' cannot have '{forbidden}'",
                        key_node.span,
                    )
        elif draft.kind is StateKind.PARALLEL:
            key_node = node.key_node("initial")
            if key_node is not None:
                self._error(
                    invalid_initial.SLUG,
                    f"parallel state '{draft.path or 'root'}' enters all its regions: "
                    "remove 'initial'",
                    key_node.span,
                )
            if node.get("states") is None:
                self._error(
                    schema_rule.SLUG,
                    f"parallel state '{draft.path or 'root'}' needs regions under 'states'",
                    node.span,
                )
        done_key = node.key_node("done")
        if draft.kind is StateKind.ATOMIC and done_key is not None:
            self._error(
                schema_rule.SLUG,
                f"'done' on '{draft.path or 'the root'}' never fires: it has no child states "
                "to finish",
                done_key.span,
                "`done` belongs on a compound state (a final child reached) or a parallel "
                "state (every region final)",
            )
        if draft.parent is None and node.key_node("done") is not None:
            done_key = node.key_node("done")
            assert done_key is not None
            self._error(
                schema_rule.SLUG,
                "'done' on the root is never taken: the chart stops when it reaches a "
                "top-level final state",
                done_key.span,
            )

    def _error(self, slug: str, message: str, span: SourceSpan, *notes: str) -> None:
        self.problems.append(Diagnostic(slug, Severity.ERROR, message, span, notes))

    # ---- pass 2: references --------------------------------------------------------
    def resolve(self, ref: str, span: SourceSpan) -> int | None:
        """Resolve a state reference, reporting a diagnostic when it fails."""
        found = self.index.resolve(ref, span)
        if isinstance(found, Diagnostic):
            self.problems.append(found)
            return None
        return found

    def resolve_activatable(self, ref: str, span: SourceSpan) -> int | Diagnostic:
        """Resolve a reference that must name a state able to be active (not history)."""
        found = self.index.resolve(ref, span)
        if isinstance(found, int) and self.drafts[found].kind is StateKind.HISTORY:
            parent = self.drafts[self.drafts[found].parent or 0].path
            return Diagnostic(
                unknown_state.SLUG,
                Severity.ERROR,
                f"'{ref}' is a history pseudo-state, which is never active",
                span,
                (f"name a real state, e.g. its parent '{parent}'",),
            )
        return found

    def _resolve_relative(self, draft: _Draft, ref: ScalarNode) -> int | None:
        current = draft
        for part in str(ref.value).split("."):
            match = [
                c
                for c in current.children + current.history_children
                if self.drafts[c].name == part
            ]
            if not match:
                return None
            current = self.drafts[match[0]]
        return current.id

    def _resolve_initial(self, draft: _Draft) -> None:
        node = draft.node.get("initial")
        where = draft.path or "the root"
        if draft.kind is StateKind.COMPOUND:
            if not isinstance(node, ScalarNode) or node.value is None:
                names = ", ".join(self.drafts[c].name for c in draft.children)
                self._error(
                    invalid_initial.SLUG,
                    f"compound state '{where}' needs 'initial': one of {names}",
                    draft.span,
                )
                return
            target = self._resolve_relative(draft, node)
            if target is None:
                names = ", ".join(self.drafts[c].name for c in draft.children)
                self._error(
                    invalid_initial.SLUG,
                    f"initial '{node.value}' of '{where}' is not a child or descendant "
                    f"(children: {names})",
                    node.span,
                )
            elif self.drafts[target].kind is StateKind.HISTORY:
                self._error(
                    invalid_initial.SLUG,
                    f"initial '{node.value}' of '{where}' is a history state",
                    node.span,
                )
            else:
                draft.initial = (target,)
        elif draft.kind is not StateKind.PARALLEL and node is not None:
            key = draft.node.key_node("initial")
            assert key is not None
            self._error(
                invalid_initial.SLUG,
                f"'{where}' has no child states, so 'initial' means nothing",
                key.span,
            )

    def _resolve_history_default(self, draft: _Draft) -> None:
        parent = self.drafts[draft.parent or 0]
        refs = scalar_list(draft.node.get("default"))
        if not refs:
            draft.history_default = parent.initial or tuple(parent.children)
            return
        targets: list[int] = []
        for ref in refs:
            target = self.resolve(str(ref.value), ref.span)
            if target is None:
                continue
            if not (parent.id < target <= self._last_descendant(parent.id)):
                self._error(
                    invalid_initial.SLUG,
                    f"history default '{ref.value}' must be inside '{parent.path}'",
                    ref.span,
                )
            elif self.drafts[target].kind is StateKind.HISTORY:
                self._error(
                    invalid_initial.SLUG,
                    f"history default '{ref.value}' is a history state",
                    ref.span,
                )
            else:
                targets.append(target)
        draft.history_default = tuple(targets)

    def _last_descendant(self, state_id: int) -> int:
        last = state_id
        draft = self.drafts[state_id]
        for child in draft.children + draft.history_children:
            last = max(last, self._last_descendant(child))
        return last

    # ---- pass 2: transitions -------------------------------------------------------
    def _guard_expression(self, name: str, event: EventDecl | None) -> Expression | None:
        key = (name, None if event is None else event.name)
        if key not in self._guard_cache:
            decl = self.guards[name]
            scope = self.effects.scope(
                event, "this guard is used by an eventless or done transition"
            )
            result = compile_expression(
                decl.source, decl.if_span, scope, BOOLEAN, f"guard '{name}'"
            )
            if isinstance(result, tuple):
                used_by = (
                    f"used by a transition on {event.name}" if event else "used without an event"
                )
                self.problems.extend(
                    Diagnostic(d.slug, d.severity, d.message, d.span, (*d.notes, used_by))
                    for d in result
                )
                self._guard_cache[key] = None
            else:
                self._guard_cache[key] = result
        return self._guard_cache[key]

    def _transition(
        self,
        draft: _Draft,
        node: Node,
        kind: TransitionKind,
        event: EventDecl | None,
        event_name: str | None,
    ) -> None:
        targets: list[int] = []
        guards: list[GuardCheck] = []
        effects: tuple[object, ...] = ()
        description: str | None = None
        unavailable = {
            TransitionKind.ALWAYS: "eventless (always) transitions have no event",
            TransitionKind.DONE: "done transitions have no typed event",
            TransitionKind.EVENT: "",
        }[kind]
        scope = self.effects.scope(event, unavailable)
        target_refs: list[ScalarNode] = []
        if isinstance(node, ScalarNode):
            if node.value is not None:
                target_refs = [node]
        elif isinstance(node, MappingNode):
            target_refs = scalar_list(node.get("to"))
            description = text(node.get("description"))
            for guard_ref in scalar_list(node.get("guard")):
                name = str(guard_ref.value)
                if name not in self.guards:
                    self._error(
                        unknown_guard.SLUG,
                        f"unknown guard '{name}'",
                        guard_ref.span,
                        f"declared guards: {', '.join(self.guards) or 'none'}",
                    )
                    continue
                self.used_guards.add(name)
                compiled = self._guard_expression(name, event)
                if compiled is not None:
                    guards.append(
                        GuardCheck(name, compiled, self.guards[name].reason, guard_ref.span)
                    )
            if_node = node.get("if")
            if isinstance(if_node, ScalarNode):
                result = compile_expression(if_node.value, if_node.span, scope, BOOLEAN, "'if'")
                if isinstance(result, tuple):
                    self.problems.extend(result)
                else:
                    reason = text(node.get("else")) or DEFAULT_GUARD_REASON
                    guards.append(GuardCheck(None, result, reason, if_node.span))
            compiled_effects, problems = self.effects.compile_list(node.get("do"), scope)
            self.problems.extend(problems)
            effects = compiled_effects
        for ref in target_refs:
            target = self.resolve(str(ref.value), ref.span)
            if target is not None:
                targets.append(target)
        self._check_targets(targets, target_refs)
        draft.transitions.append(len(self.transitions))
        self.transitions.append(
            _TransitionDraft(
                draft.id,
                kind,
                event_name,
                tuple(targets),
                tuple(guards),
                effects,
                description,
                node.span,
            )
        )

    def _check_targets(self, targets: list[int], refs: list[ScalarNode]) -> None:
        for i, a in enumerate(targets):
            for b in targets[i + 1 :]:
                ok = (
                    a != b
                    and not (self._is_ancestor(a, b) or self._is_ancestor(b, a))
                    and self._in_orthogonal_regions(a, b)
                )
                if not ok:
                    self._error(
                        invalid_target.SLUG,
                        f"targets '{self.drafts[a].path}' and '{self.drafts[b].path}' cannot "
                        "be active together: a transition with several targets needs one per "
                        "region of a parallel state",
                        refs[0].span,
                    )
                    return

    def _is_ancestor(self, a: int, b: int) -> bool:
        return a < b <= self._last_descendant(a)

    def _in_orthogonal_regions(self, a: int, b: int) -> bool:
        # The nearest common ancestor must be a parallel state (or the parallel root).
        anc = self.drafts[a].parent
        while anc is not None and not self._is_ancestor(anc, b):
            anc = self.drafts[anc].parent
        return anc is not None and self.drafts[anc].kind is StateKind.PARALLEL

    def _state_transitions(self, draft: _Draft) -> None:
        node = draft.node
        for key, value in mapping_items(node.get("on")):
            name = str(key.value)
            event = self.events.get(name)
            if event is None:
                self._unknown_event(name, key.span)
            for alternative in _alternatives(value):
                self._transition(draft, alternative, TransitionKind.EVENT, event, name)
        for alternative in _alternatives(node.get("always")):
            self._transition(draft, alternative, TransitionKind.ALWAYS, None, None)
        for alternative in _alternatives(node.get("done")):
            self._transition(
                draft, alternative, TransitionKind.DONE, None, f"done.state.{draft.path}"
            )

    def _unknown_event(self, name: str, span: SourceSpan) -> None:
        self._error(
            unknown_event.SLUG,
            f"undeclared event '{name}'",
            span,
            f"declare it under events: (declared: {', '.join(self.events) or 'none'})",
        )

    def _classifications(
        self, draft: _Draft
    ) -> tuple[list[ClassifiedEvent], list[ClassifiedEvent]]:
        already: list[ClassifiedEvent] = []
        for ref in scalar_list(draft.node.get("already")):
            name = str(ref.value)
            if name not in self.events:
                self._unknown_event(name, ref.span)
            already.append(ClassifiedEvent(name, None, ref.span))
        reject: list[ClassifiedEvent] = []
        for key, reason in mapping_items(draft.node.get("reject")):
            name = str(key.value)
            if name != "*" and name not in self.events:
                self._unknown_event(name, key.span)
            reject.append(ClassifiedEvent(name, text(reason) or "REJECTED", key.span))
        return already, reject

    def _invariants(self) -> list[Invariant]:
        out: list[Invariant] = []
        scope = self.effects.scope(None, "invariants are checked between events")
        for key, spec in mapping_items(self.root_node.get("invariants")):
            if not isinstance(spec, MappingNode):
                continue
            name = str(key.value)
            description = text(spec.get("description"))
            assertion = spec.get("assert")
            if isinstance(assertion, ScalarNode):
                result = compile_expression(
                    assertion.value, assertion.span, scope, BOOLEAN, f"invariant '{name}'"
                )
                if isinstance(result, tuple):
                    self.problems.extend(result)
                else:
                    out.append(ExpressionInvariant(name, result, description, key.span))
                continue
            refs: dict[str, tuple[int, ...]] = {}
            for part in ("when", "require", "forbid"):
                ids = []
                for ref in scalar_list(spec.get(part)):
                    found = self.resolve_activatable(str(ref.value), ref.span)
                    if isinstance(found, Diagnostic):
                        self.problems.append(found)
                    else:
                        ids.append(found)
                refs[part] = tuple(ids)
            out.append(
                StateInvariant(
                    name, refs["when"], refs["require"], refs["forbid"], description, key.span
                )
            )
        return out

    def _lint_settings(self) -> LintSettings:
        node = self.root_node.get("lint")
        if not isinstance(node, MappingNode):
            return LintSettings()
        ignored = scalar_list(node.get("ignore"))
        severities = list(mapping_items(node.get("severity")))
        return LintSettings(
            ignore=tuple(str(n.value) for n in ignored),
            severity=tuple((str(k.value), str(text(v))) for k, v in severities),
            span=node.span,
            slug_spans=tuple((str(n.value), n.span) for n in ignored)
            + tuple((str(k.value), k.span) for k, _ in severities),
        )

    # ---- the whole build -----------------------------------------------------------
    def build(self) -> CompiledChart | None:
        """Run both passes; None when any error was found (see `problems`)."""
        root = self.root_node
        name = text(root.get("statechart")) or "chart"
        self._add_state(name, root, None, root.span)
        self.index = StateIndex((d.id, d.path) for d in self.drafts)
        context, problems = parse_fields(root.get("context"), in_context=True)
        self.problems.extend(problems)
        self.context = {f.name: f for f in context}
        self.events, problems = parse_events(root.get("events"))
        self.problems.extend(problems)
        self.guards = parse_guards(root.get("guards"))
        self.effects = EffectCompiler(self.context, self.events, self.resolve_activatable)
        for draft in self.drafts:
            self._resolve_initial(draft)
        for draft in self.drafts:
            if draft.kind is StateKind.HISTORY:
                self._resolve_history_default(draft)
        entry_exit: dict[int, tuple[tuple[object, ...], tuple[object, ...]]] = {}
        classified: dict[int, tuple[list[ClassifiedEvent], list[ClassifiedEvent]]] = {}
        for draft in self.drafts:
            if draft.kind is StateKind.HISTORY:
                continue
            self._state_transitions(draft)
            scope = self.effects.scope(None, "entry and exit actions run without a typed event")
            entry, problems = self.effects.compile_list(draft.node.get("entry"), scope)
            self.problems.extend(problems)
            exit_, problems = self.effects.compile_list(draft.node.get("exit"), scope)
            self.problems.extend(problems)
            entry_exit[draft.id] = (entry, exit_)
            classified[draft.id] = self._classifications(draft)
        invariants = self._invariants()
        for guard_name in self.guards:
            if guard_name not in self.used_guards:
                self._check_unused_guard(guard_name)
        lint = self._lint_settings()
        if any(p.severity is Severity.ERROR for p in self.problems):
            return None
        return _freeze(self, name, entry_exit, classified, invariants, lint)

    def _check_unused_guard(self, name: str) -> None:
        """An unused guard is still checked; only its `event.*` fields cannot be.

        The event a guard sees is the one of the transition that uses it, so an
        unused guard is checked in a scope whose event is deferred: its `event.*`
        reads go unchecked and everything else is reported.
        """
        decl = self.guards[name]
        scope = self.effects.deferred_scope()
        result = compile_expression(decl.source, decl.if_span, scope, BOOLEAN, f"guard '{name}'")
        if isinstance(result, tuple):
            self.problems.extend(result)


def _alternatives(node: Node | None) -> tuple[Node, ...]:
    if node is None:
        return ()
    if isinstance(node, SequenceNode):
        return node.items
    return (node,)


def _freeze(
    builder: ChartBuilder,
    name: str,
    entry_exit: Mapping[int, tuple[tuple[object, ...], tuple[object, ...]]],
    classified: Mapping[int, tuple[list[ClassifiedEvent], list[ClassifiedEvent]]],
    invariants: list[Invariant],
    lint: LintSettings,
) -> CompiledChart:
    drafts = builder.drafts
    last = [0] * len(drafts)
    for draft in reversed(drafts):
        last[draft.id] = max(
            [draft.id, *(last[c] for c in draft.children + draft.history_children)]
        )
    states: list[StateNode] = []
    for d in drafts:
        ancestors: list[int] = []
        parent = d.parent
        while parent is not None:
            ancestors.append(parent)
            parent = drafts[parent].parent
        entry, exit_ = entry_exit.get(d.id, ((), ()))
        already, reject = classified.get(d.id, ([], []))
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
                entry=entry,  # type: ignore[arg-type]
                exit=exit_,  # type: ignore[arg-type]
                transitions=tuple(d.transitions),
                already=tuple(already),
                reject=tuple(reject),
                description=text(d.node.get("description")),
                span=d.span,
            )
        )
    states = [
        replace(s, default_entry=scxml_procedures.default_entry(states, s.id))
        if s.kind is not StateKind.HISTORY
        else s
        for s in states
    ]
    transitions: list[Transition] = []
    for tid, t in enumerate(builder.transitions):
        targets_history = any(states[x].kind is StateKind.HISTORY for x in t.targets)
        domain = entry_set = None
        if t.targets and not targets_history:
            domain = scxml_procedures.transition_domain(
                states, t.source, t.targets, scxml_procedures.no_history
            )
            entry_set = scxml_procedures.entry_set(
                states, t.targets, domain, scxml_procedures.no_history
            )
        transitions.append(
            Transition(
                id=tid,
                source=t.source,
                kind=t.kind,
                event=t.event,
                targets=t.targets,
                guards=t.guards,
                effects=t.effects,  # type: ignore[arg-type]
                description=t.description,
                span=t.span,
                targets_history=targets_history,
                domain=domain,
                entry_set=entry_set,
            )
        )
    candidates, eventless = _selection_tables(states, transitions)
    version_node = builder.root_node.get("version")
    version = version_node.value if isinstance(version_node, ScalarNode) else 1
    chart = CompiledChart(
        name=name,
        version=version if isinstance(version, int) else 1,
        description=text(builder.root_node.get("description")),
        file=builder.file,
        states=tuple(states),
        transitions=tuple(transitions),
        events=MappingProxyType(dict(builder.events)),
        context=MappingProxyType(dict(builder.context)),
        guards=MappingProxyType(dict(builder.guards)),
        invariants=tuple(invariants),
        candidates=candidates,
        eventless=eventless,
        path_index=MappingProxyType({s.path: s.id for s in states}),
        lint=lint,
        span=builder.root_node.span,
    )
    return replace(chart, digest=chart_digest(chart))


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

"""Pass 2 of the model: references resolved, expressions and effects compiled.

`resolve_model` numbers the states (pass 1, `statekit.compiler.model.numbering`),
then resolves every state reference, initial and history default, compiles
each state's transitions and timers (`statekit.compiler.model.transition_resolution`),
entry and exit effects and the invariants against the declarations, and
collects every diagnostic; `statekit.compiler.model.freezing` turns the result
into the IR.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import compile_expression
from statekit.compiler.ir import (
    ClassifiedEvent,
    EventDecl,
    FieldDecl,
    GuardDecl,
    StateKind,
)
from statekit.compiler.migration_ir import MigrationDecl
from statekit.compiler.model.addresses import error_communication_decl
from statekit.compiler.model.concurrency import compile_producers, compile_races
from statekit.compiler.model.declarations import (
    mapping_items,
    parse_events,
    parse_fields,
    parse_guards,
    parse_lint_settings,
    scalar_list,
    text,
)
from statekit.compiler.model.definitions import ChartDefinitions
from statekit.compiler.model.done_payloads import done_payloads
from statekit.compiler.model.effect_compiler import EffectCompiler
from statekit.compiler.model.evaluation_errors import error_execution_decl
from statekit.compiler.model.finalize_effects import with_finalize
from statekit.compiler.model.freezing import ResolvedModel, StateBody
from statekit.compiler.model.idempotency import compile_idempotency
from statekit.compiler.model.invariants import compile_invariants
from statekit.compiler.model.invocation_reader import (
    NO_EVENT_IN_INVOCATIONS,
    compile_invocations,
    declare_invocations,
)
from statekit.compiler.model.migrations import read_migrations
from statekit.compiler.model.numbering import StateDraft, number_states
from statekit.compiler.model.references import StateReferences
from statekit.compiler.model.root_effects import root_effect_problems
from statekit.compiler.model.tables import parse_tables
from statekit.compiler.model.timer_controls import unknown_controlled_names
from statekit.compiler.model.transition_resolution import TransitionResolver
from statekit.compiler.rules import (
    unknown_event,
    unknown_timer_id,
)
from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.compiler.value_types import BOOLEAN

ENTRY_AND_EXIT_EVENT: Final = "entry and exit actions run for whichever event enters or exits"
"""Why `event.<field>` cannot be read in `entry:`/`exit:` (`_event.name` can)."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """The resolved model (None when any error was found) and every diagnostic of both passes."""

    model: ResolvedModel | None
    problems: tuple[Diagnostic, ...]


def resolve_model(root: MappingNode, file: str) -> Resolution:
    """Run both passes over a schema-valid positioned tree."""
    resolver = _Resolver(root, file)
    model = resolver.run()
    return Resolution(model=model, problems=tuple(resolver.problems))


class _Resolver:
    """Pass 2 over the numbered states of one chart, collecting diagnostics."""

    def __init__(self, root: MappingNode, file: str) -> None:
        self.root_node = root
        self.file = file
        self.name = text(root.get("statechart")) or "chart"
        numbered = number_states(root, self.name)
        self.drafts = numbered.drafts
        self.problems: list[Diagnostic] = list(numbered.problems)
        self.references = StateReferences(self.drafts, self.problems)
        self.resolve_activatable = self.references.resolve_activatable
        context = parse_fields(root.get("context"), in_context=True)
        self.problems.extend(context.problems)
        self.context: dict[str, FieldDecl] = {f.name: f for f in context.fields}
        events = parse_events(root.get("events"))
        self.problems.extend(events.problems)
        # each invocation declares done.invoke.<id> and error.invoke.<id> (no `events:` entry)
        self.invoked = declare_invocations(self.drafts, self.problems)
        self.events: Mapping[str, EventDecl] = (
            {**events.events, **self.invoked.events} if self.invoked.events else events.events
        )
        error_event = error_execution_decl(root)
        if error_event is not None:  # `on_evaluation_error: raise` declares error.execution
            self.events = {**self.events, error_event.name: error_event}
        unreachable = error_communication_decl(root)
        if unreachable is not None and unreachable.name not in self.events:
            self.events = {**self.events, unreachable.name: unreachable}  # `to: {address}`
        self.guards: dict[str, GuardDecl] = parse_guards(root.get("guards"))
        tables = parse_tables(root.get("tables"), self.context)
        self.problems.extend(tables.problems)
        self.tables = tables.tables
        self.definitions = ChartDefinitions(
            root.get("define"),
            self.context,
            self.resolve_activatable,
            tables.tables,
            tables.broken,
        )
        self.effects = EffectCompiler(
            self.context, self.events, self.resolve_activatable, self.definitions.scope
        )
        self.moves = TransitionResolver(
            self.events,
            self.guards,
            self.effects,
            self.references,
            self.drafts,
            self.problems,
            self._unknown_event,
        )

    def run(self) -> ResolvedModel | None:
        """Resolve the whole chart; None when any error was found (see `problems`)."""
        self.problems.extend(root_effect_problems(self.root_node))
        for draft in self.drafts:
            self.references.resolve_initial(draft)
        for draft in self.drafts:
            if draft.kind is StateKind.HISTORY:
                self.references.resolve_history_default(draft)
        invoked = compile_invocations(
            self.invoked,
            self.drafts,
            self.effects.scope(None, NO_EVENT_IN_INVOCATIONS),
            self.problems,
        )
        finalized = tuple(
            with_finalize(i, d.finalize, self.effects, self.events, self.problems)
            for i, d in zip(invoked.invocations, self.invoked.invocations, strict=True)
        )
        self.moves.done_payloads = done_payloads(self.drafts, invoked.outputs, self.problems)
        bodies: dict[int, StateBody] = {}
        for draft in self.drafts:
            if draft.kind is StateKind.HISTORY:
                continue
            timers = self.moves.state(draft)
            scope = self.effects.scope(None, ENTRY_AND_EXIT_EVENT, any_event=True)
            entry = self.effects.compile_list(draft.node.get("entry"), scope)
            self.problems.extend(entry.problems)
            exit_ = self.effects.compile_list(draft.node.get("exit"), scope)
            self.problems.extend(exit_.problems)
            already, reject = self._classifications(draft)
            bodies[draft.id] = StateBody(
                entry=entry.effects,
                exit=exit_.effects,
                already=already,
                reject=reject,
                timers=timers,
            )
        self.problems.extend(self.effects.targets.unknown_children(self.invoked.ids))
        scope = self.effects.scope(None, "invariants are checked between events")
        invariants = compile_invariants(
            self.root_node.get("invariants"), scope, self.resolve_activatable
        )
        self.problems.extend(invariants.problems)
        producers = compile_producers(
            self.root_node.get("producers"), self.events, self._unknown_event, self.problems
        )
        races = compile_races(
            self.root_node.get("races"),
            self.resolve_activatable,
            self.events,
            {timer.name for timer in self.moves.timers} | self.moves.labelled_timers,
            self.problems,
        )
        idempotency = compile_idempotency(self.root_node.get("idempotency"), self.events)
        self.problems.extend(idempotency.problems)
        for guard_name in self.guards:
            if guard_name not in self.moves.used_guards:
                self._check_unused_guard(guard_name)
        self._check_cancelled_ids()
        self.problems.extend(
            unknown_controlled_names(
                self.effects.controlled_names,
                self.effects.sent_ids | self.moves.timer_labels,
                self.moves.timers,
            )
        )
        migrations = self._migrations()
        definitions = self.definitions.check_all()
        self.problems.extend(self.definitions.problems)
        lint = parse_lint_settings(self.root_node.get("lint"))
        if any(p.severity is Severity.ERROR for p in self.problems):
            return None
        return ResolvedModel(
            name=self.name,
            file=self.file,
            root=self.root_node,
            drafts=self.drafts,
            transitions=tuple(self.moves.transitions),
            bodies=bodies,
            events=self.events,
            context=self.context,
            guards=self.guards,
            invariants=invariants.invariants,
            lint=lint,
            producers=producers,
            races=races,
            idempotency=idempotency.keys,
            migrations=migrations,
            timers=tuple(self.moves.timers),
            definitions=definitions,
            tables=self.tables,
            invocations=finalized,
            outputs=invoked.outputs,
        )

    def _migrations(self) -> tuple[MigrationDecl, ...]:
        """The `migrations:` list read (`model.migrations`), its problems collected."""
        version_node = self.root_node.get("version")
        version = version_node.value if isinstance(version_node, ScalarNode) else 1
        paths = {d.path: d.kind is not StateKind.HISTORY for d in self.drafts if d.path}
        read = read_migrations(
            self.root_node.get("migrations"),
            version if isinstance(version, int) else 1,
            paths,
            self.context,
            {timer.name for timer in self.moves.timers} | self.moves.labelled_timers,
            self.definitions.names(),
        )
        self.problems.extend(read.problems)
        return read.migrations

    def _error(self, slug: str, message: str, span: SourceSpan, *notes: str) -> None:
        self.problems.append(
            Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span, notes=notes)
        )

    def _check_cancelled_ids(self) -> None:
        sent = self.effects.sent_ids
        for name, span in self.effects.cancelled_ids:
            if name not in sent:
                self._error(
                    unknown_timer_id.SLUG,
                    f"cancel of '{name}': no send in the chart has this id",
                    span,
                    f"ids of sends: {', '.join(sorted(sent)) or 'none'}",
                )

    def _unknown_event(self, name: str, span: SourceSpan) -> None:
        self._error(
            unknown_event.SLUG,
            f"undeclared event '{name}'",
            span,
            f"declare it under events: (declared: {', '.join(self.events) or 'none'})",
        )

    def _classifications(
        self, draft: StateDraft
    ) -> tuple[tuple[ClassifiedEvent, ...], tuple[ClassifiedEvent, ...]]:
        already: list[ClassifiedEvent] = []
        for ref in scalar_list(draft.node.get("already")):
            name = str(ref.value)
            if name not in self.events:
                self._unknown_event(name, ref.span)
            already.append(ClassifiedEvent(event=name, reason=None, span=ref.span))
        reject: list[ClassifiedEvent] = []
        for key, reason in mapping_items(draft.node.get("reject")):
            name = str(key.value)
            if name != "*" and name not in self.events:
                self._unknown_event(name, key.span)
            reject.append(
                ClassifiedEvent(event=name, reason=text(reason) or "REJECTED", span=key.span)
            )
        return tuple(already), tuple(reject)

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

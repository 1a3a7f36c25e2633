"""Pass 2 of the model, the transitions: each state's `on:`, `always:`, `done:` and
`after:` entries resolved into transition drafts, with their guards (named and `if:`),
targets and effects compiled, and the timers its `after:` entries declare."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.ir import (
    Effect,
    EventDecl,
    GuardCheck,
    GuardDecl,
    TimerDecl,
    TransitionKind,
)
from statekit.compiler.model.declarations import (
    DEFAULT_GUARD_REASON,
    mapping_items,
    scalar_list,
    text,
)
from statekit.compiler.model.done_events import done_event, is_done_event
from statekit.compiler.model.effect_compiler import EffectCompiler
from statekit.compiler.model.freezing import TransitionDraft
from statekit.compiler.model.numbering import StateDraft
from statekit.compiler.model.references import StateReferences
from statekit.compiler.model.timer_controls import timer_labels
from statekit.compiler.model.timers import NO_EVENT_IN_TIMERS, TimerEntry, read_timer_entries
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.rules import unknown_guard
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import BOOLEAN

_NO_EVENT: Final = {
    TransitionKind.ALWAYS: "an eventless (always) transition runs for whichever event came last",
    TransitionKind.DONE: "done transitions have no typed event (no final child gives an `output:`)",
    TransitionKind.EVENT: "",
}
"""Why a transition of each kind has no typed event (`event.<field>` reads are errors;
what the event is, `_event.name` and the rest, may be read)."""


class TransitionResolver:
    """The transitions and timers of a chart's states, state by state (`state`), with the
    guards they use (`used_guards`) and the labels of their timers; diagnostics go to
    `problems`, an undeclared event's to `unknown_event`."""

    def __init__(
        self,
        events: Mapping[str, EventDecl],
        guards: Mapping[str, GuardDecl],
        effects: EffectCompiler,
        references: StateReferences,
        drafts: tuple[StateDraft, ...],
        problems: list[Diagnostic],
        unknown_event: Callable[[str, SourceSpan], None],
    ) -> None:
        self.events = events
        self.guards = guards
        self.effects = effects
        self.references = references
        self.drafts = drafts
        self.problems = problems
        self._unknown_event = unknown_event
        self.transitions: list[TransitionDraft] = []
        self.timers: list[TimerDecl] = []
        # the `id:` and event name of every `after` list entry, even one with errors, so
        # that a `pause:`, race or migration naming it reports nothing more
        self.timer_labels: set[str] = set()
        self.labelled_timers: set[str] = set()
        self.used_guards: set[str] = set()
        self.done_payloads: dict[int, EventDecl] = {}  # set before the first `state`
        self._guard_cache: dict[tuple[str, str | None, bool], Expression | None] = {}

    def state(self, draft: StateDraft) -> tuple[int, ...]:
        """Resolve `draft`'s transitions and timers; the ids of its timers."""
        self._state_transitions(draft)
        return self._timers(draft)

    def _error(self, slug: str, message: str, span: SourceSpan, *notes: str) -> None:
        self.problems.append(
            Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span, notes=notes)
        )

    def _guard_expression(
        self, name: str, event: EventDecl | None, *, timer: bool = False
    ) -> Expression | None:
        # A timer's transitions have no event either, but say so in their own words.
        key = (name, None if event is None else event.name, timer)
        if key not in self._guard_cache:
            decl = self.guards[name]
            scope = self.effects.scope(
                event,
                NO_EVENT_IN_TIMERS
                if timer
                else "this guard is used by an eventless or done transition",
                any_event=not timer,
            )
            result = compile_expression(
                decl.source, decl.if_span, scope, BOOLEAN, f"guard '{name}'"
            )
            if isinstance(result, tuple):
                used_by = (
                    f"used by a transition on {event.name}"
                    if event
                    else "used by a timer"
                    if timer
                    else "used without an event"
                )
                self.problems.extend(
                    Diagnostic(
                        slug=d.slug,
                        severity=d.severity,
                        message=d.message,
                        span=d.span,
                        notes=(*d.notes, used_by),
                    )
                    for d in result
                )
                self._guard_cache[key] = None
            else:
                self._guard_cache[key] = result
        return self._guard_cache[key]

    def _transition(
        self,
        draft: StateDraft,
        node: Node,
        kind: TransitionKind,
        event: EventDecl | None,
        event_name: str | None,
        *,
        timer: bool = False,
    ) -> None:
        targets: list[int] = []
        guards: list[GuardCheck] = []
        effects: tuple[Effect, ...] = ()
        description: str | None = None
        unavailable = _NO_EVENT[kind]
        # An undeclared event is reported once (unknown-event); its payload is unknown, so
        # `event.<field>` reads go unchecked rather than cascading into expression-type.
        undeclared = kind is TransitionKind.EVENT and event is None and not timer
        if timer:
            unavailable = NO_EVENT_IN_TIMERS
        scope = (
            self.effects.deferred_scope()
            if undeclared
            else self.effects.scope(event, unavailable, any_event=not timer and event is None)
        )
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
                if undeclared:
                    continue  # checked where a declared event uses it, or as unused
                self.used_guards.add(name)
                compiled = self._guard_expression(name, event, timer=timer)
                if compiled is not None:
                    guards.append(
                        GuardCheck(
                            name=name,
                            expression=compiled,
                            reason=self.guards[name].reason,
                            span=guard_ref.span,
                        )
                    )
            if_node = node.get("if")
            if isinstance(if_node, ScalarNode):
                result = compile_expression(if_node.value, if_node.span, scope, BOOLEAN, "'if'")
                if isinstance(result, tuple):
                    self.problems.extend(result)
                else:
                    reason = text(node.get("else")) or DEFAULT_GUARD_REASON
                    guards.append(
                        GuardCheck(name=None, expression=result, reason=reason, span=if_node.span)
                    )
            compiled_effects = self.effects.compile_list(node.get("do"), scope)
            self.problems.extend(compiled_effects.problems)
            effects = compiled_effects.effects
        for ref in target_refs:
            target = self.references.resolve_target(str(ref.value), draft, ref.span)
            if target is not None:
                targets.append(target)
        self.references.check_targets(targets, target_refs)
        draft.transitions.append(len(self.transitions))
        self.transitions.append(
            TransitionDraft(
                source=draft.id,
                kind=kind,
                event=event_name,
                targets=tuple(targets),
                guards=tuple(guards),
                effects=effects,
                description=description,
                span=node.span,
            )
        )

    def _state_transitions(self, draft: StateDraft) -> None:
        node = draft.node
        for key, value in mapping_items(node.get("on")):
            name = str(key.value)
            event = self.events.get(name)
            if event is None and is_done_event(name):  # any state may handle it
                found = done_event(name, key.span, draft, self.drafts, self.done_payloads)
                event = found if isinstance(found, EventDecl) else None
                if not isinstance(found, EventDecl):
                    self.problems.append(found)
            elif event is None:
                self._unknown_event(name, key.span)
            for alternative in _alternatives(value):
                self._transition(draft, alternative, TransitionKind.EVENT, event, name)
        for alternative in _alternatives(node.get("always")):
            self._transition(draft, alternative, TransitionKind.ALWAYS, None, None)
        for alternative in _alternatives(node.get("done")):
            payload = self.done_payloads.get(draft.id)  # its final children's `output:`
            self._transition(
                draft, alternative, TransitionKind.DONE, payload, f"done.state.{draft.path}"
            )

    def _timers(self, draft: StateDraft) -> tuple[int, ...]:
        """The state's `after:` entries: a timer per name (entries with one name are its
        alternatives, in document order), each entry's transitions on the timer event."""
        scope = self.effects.scope(None, NO_EVENT_IN_TIMERS)
        entries = read_timer_entries(draft.node.get("after"), draft.path, scope, self.problems)
        for label, event_name in timer_labels(draft.node.get("after"), draft.path):
            self.timer_labels.add(label)
            self.labelled_timers.add(event_name)
        own: dict[str, int] = {}
        for entry in entries:
            if entry.name in self.events:  # only a declared name with `(` and `@` can clash
                self._error(
                    schema_rule.SLUG,
                    f"the event '{entry.name}' is declared, but the name belongs to this timer",
                    entry.span,
                    "timer events are named after(<delay>)@<state>: rename the declared event",
                )
                continue
            if entry.name in own:
                first = self.timers[own[entry.name]]
                if entry.label is not None and not _same_timing(first, entry):
                    self._error(
                        schema_rule.SLUG,
                        f"timer '{entry.label}' of state '{draft.path}' has another delay "
                        f"here than at line {first.span.line}",
                        entry.span,
                        "entries with one `id:` are alternatives of one timer: give them one "
                        "`delay:` (or `at:`), or another `id:`",
                    )
                    continue
            else:
                own[entry.name] = len(self.timers)
                self.timers.append(
                    TimerDecl(
                        id=len(self.timers),
                        name=entry.name,
                        state=draft.id,
                        kind=entry.kind,
                        delay_ms=entry.delay_ms,
                        expression=entry.expression,
                        span=entry.span,
                        label=entry.label,
                    )
                )
            for alternative in entry.alternatives:
                self._transition(
                    draft, alternative, TransitionKind.EVENT, None, entry.name, timer=True
                )
        return tuple(own.values())


def _alternatives(node: Node | None) -> tuple[Node, ...]:
    if node is None:
        return ()
    if isinstance(node, SequenceNode):
        return node.items
    return (node,)


def _same_timing(timer: TimerDecl, entry: TimerEntry) -> bool:
    """Whether a named timer's later entry has the delay or deadline of its first."""
    source = None if entry.expression is None else entry.expression.source
    known = None if timer.expression is None else timer.expression.source
    return (timer.kind, timer.delay_ms, known) == (entry.kind, entry.delay_ms, source)

"""Effects (`assign`, `emit`, `raise`, `send`, `cancel`, `pause`, `resume`, `if`,
`foreach`) compiled against the declared context and events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.expressions.scope import (
    NO_DEFINITIONS,
    AnyEvent,
    DeferredEvent,
    Definitions,
    ExpressionScope,
    NoEvent,
    TypedEvent,
)
from statekit.compiler.invocations import (
    ToAddress,
    ToInstance,
)
from statekit.compiler.ir import (
    Assign,
    Cancel,
    Effect,
    Emit,
    EventDecl,
    FieldDecl,
    Pause,
    Raise,
    Resume,
    Send,
)
from statekit.compiler.model.conditional_effects import compile_conditional
from statekit.compiler.model.declarations import mapping_items, text
from statekit.compiler.model.expression_memo import ExpressionMemo
from statekit.compiler.model.field_assignments import field_assignment, path_target
from statekit.compiler.model.foreach_effects import compile_foreach
from statekit.compiler.model.message_targets import MessageTargets
from statekit.compiler.model.null_narrowing import Narrowing
from statekit.compiler.model.timers import integer_expression, read_delay
from statekit.compiler.rules import expression_type, unknown_event
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import ValueType


@dataclass(frozen=True, slots=True)
class CompiledEffects:
    """An effect list compiled (the effects without errors, in order) and its errors."""

    effects: tuple[Effect, ...]
    problems: tuple[Diagnostic, ...]


class EffectCompiler:
    """Compiles effect lists; one instance per chart."""

    def __init__(
        self,
        context: Mapping[str, FieldDecl],
        events: Mapping[str, EventDecl],
        resolve_state: Callable[[str, SourceSpan], int | Diagnostic],
        names: ExpressionScope | None = None,
    ) -> None:
        """`names`, when given, is a scope whose definitions and tables every scope shares."""
        self.context = context
        self.events = events
        self.resolve_state = resolve_state
        self.context_types = {name: f.type for name, f in context.items()}
        self.expressions = ExpressionMemo()  # a repeated expression is compiled once
        self.raised: set[str] = set()
        self.sent_ids: set[str] = set()  # the `id:` of every `send`
        self.cancelled_ids: list[tuple[str, SourceSpan]] = []  # every `cancel:`, to check
        # every `pause:` and `resume:` (verb, name, its span), checked against the timer names
        self.controlled_names: list[tuple[str, str, SourceSpan]] = []
        self._scopes: dict[tuple[str | None, str, bool], ExpressionScope] = {}
        self.definitions: Definitions = NO_DEFINITIONS if names is None else names.definitions
        self.tables: Mapping[str, LookupTable] = (
            MappingProxyType({}) if names is None else names.tables
        )
        self.broken_tables = frozenset[str]() if names is None else names.broken_tables
        self.targets = MessageTargets(self._expression, self._declared)  # `send`'s `to:`
        self.narrowing = Narrowing(self.context_types)

    def scope(
        self, event: EventDecl | None, unavailable: str, *, any_event: bool = False
    ) -> ExpressionScope:
        """The expression scope for code that runs with `event` (one per event and reason).

        With no typed event (None), `event.<field>` is an error giving `unavailable`; with
        `any_event`, the code runs for whichever event is bound (entry and exit actions,
        eventless transitions) and may read what it is (`_event.name`, typed nullable).
        """
        key = (None if event is None else event.name, unavailable, any_event)
        found = self._scopes.get(key)
        if found is None:
            in_scope: TypedEvent | NoEvent | AnyEvent = (
                TypedEvent(fields=event.field_types(), name=event.name)
                if event is not None
                else AnyEvent(unavailable)
                if any_event
                else NoEvent(unavailable)
            )
            found = self._scopes[key] = ExpressionScope(
                context=self.context_types,
                event=in_scope,
                resolve_state=self.resolve_state,
                definitions=self.definitions,
                tables=self.tables,
                broken_tables=self.broken_tables,
            )
        return found

    def deferred_scope(self) -> ExpressionScope:
        """The scope of a guard no transition uses: its `event.<field>` reads go unchecked."""
        return ExpressionScope(
            context=self.context_types,
            event=DeferredEvent(),
            resolve_state=self.resolve_state,
            definitions=self.definitions,
            tables=self.tables,
            broken_tables=self.broken_tables,
        )

    def compile_list(self, node: Node | None, scope: ExpressionScope) -> CompiledEffects:
        """An effect list (a single effect mapping is accepted as a list of one)."""
        return self.compile_flow(node, scope)[0]

    def compile_flow(
        self, node: Node | None, scope: ExpressionScope
    ) -> tuple[CompiledEffects, ExpressionScope]:
        """An effect list, and the scope at its end: `scope` with the context fields its
        effects narrow to non-null, or widen back (`null_narrowing`)."""
        items: tuple[Node, ...]
        if node is None:
            return CompiledEffects(effects=(), problems=()), scope
        items = node.items if isinstance(node, SequenceNode) else (node,)
        effects: list[Effect] = []
        problems: list[Diagnostic] = []
        for item in items:
            if not isinstance(item, MappingNode) or not item.items:
                continue  # the schema admits only one-key effect mappings
            key, value = item.items[0]
            kind = str(key.value)
            effect: Effect | None
            if kind == "assign":
                effect, scope = self._assign(value, item.span, scope, problems)
            elif kind == "if":
                effect, scope = compile_conditional(
                    value, item.span, scope, self._nested, problems, self.narrowing
                )
            elif kind == "foreach":
                effect, scope = compile_foreach(
                    value, item.span, scope, self._loop_body, problems, self.narrowing
                )
            else:
                effect = self._compile_one(kind, value, item.span, scope, problems)
            if effect is not None:
                effects.append(effect)
        return CompiledEffects(effects=tuple(effects), problems=tuple(problems)), scope

    def _nested(
        self, node: Node | None, scope: ExpressionScope
    ) -> tuple[tuple[Effect, ...], list[Diagnostic], ExpressionScope]:
        """A branch's effect list (of an `if`), in the scope of the effect around it, and
        the scope at its end."""
        compiled, end = self.compile_flow(node, scope)
        return compiled.effects, list(compiled.problems), end

    def _loop_body(
        self, node: Node | None, scope: ExpressionScope
    ) -> tuple[tuple[Effect, ...], list[Diagnostic], ExpressionScope]:
        """A `foreach` body: compiled in `scope` less the narrowings the body itself undoes
        (they must hold on every pass), again without them until none is undone."""
        while True:
            marks = (
                len(self.cancelled_ids),
                len(self.controlled_names),
                len(self.targets.child_targets),
            )
            effects, problems, end = self._nested(node, scope)
            lost = self.narrowing.narrowed(scope) - self.narrowing.narrowed(end)
            if not lost:
                return effects, problems, end
            del self.cancelled_ids[marks[0] :]  # compiled again: recorded again
            del self.controlled_names[marks[1] :]
            del self.targets.child_targets[marks[2] :]
            scope = self.narrowing.with_nullable(scope, dict.fromkeys(lost, True))

    def _assign(
        self, value: Node, span: SourceSpan, scope: ExpressionScope, problems: list[Diagnostic]
    ) -> tuple[Assign, ExpressionScope]:
        """An `assign` (its keys in order, each seeing the ones before), and the scope
        after it: a field given a value never null is narrowed, one maybe null widened."""
        assignments: list[tuple[str, Expression]] = []
        for key, expr_node in mapping_items(value):
            name, *path = str(key.value).split(".")
            target = self.context.get(name)
            if target is None:
                problems.append(
                    Diagnostic(
                        slug=expression_type.SLUG,
                        severity=Severity.ERROR,
                        message=f"assign to unknown context field '{name}'",
                        span=key.span,
                        notes=(f"declared context fields: {', '.join(self.context) or 'none'}",),
                    )
                )
                continue
            expected = path_target(target, tuple(path), key.span) if path else target.type
            if isinstance(expected, Diagnostic):
                problems.append(expected)
                continue
            compiled = self._expression(
                expr_node, scope, expected, f"assign to ctx.{key.value}", problems
            )
            if compiled is not None and path:  # a new record with that field changed
                compiled = field_assignment(target, tuple(path), compiled)
            if compiled is None:  # its errors are reported, not again at each read after it
                scope = self.narrowing.with_nullable(scope, {name: False})
            else:
                assignments.append((name, compiled))
                scope = self.narrowing.after_assign(scope, name, compiled.type)
        return Assign(assignments=tuple(assignments), span=span), scope

    def _compile_one(
        self,
        kind: str,
        value: Node,
        span: SourceSpan,
        scope: ExpressionScope,
        problems: list[Diagnostic],
    ) -> Effect | None:
        if kind == "emit" and isinstance(value, MappingNode):
            payload = self._payload(value.get("payload"), scope, None, span, problems)
            return Emit(type=text(value.get("type")) or "", payload=payload, span=span)
        if kind == "raise":
            name_node = value.get("event") if isinstance(value, MappingNode) else value
            event_name = text(name_node)
            if event_name is None or name_node is None:
                return None
            decl = self._declared("raise", event_name, name_node, problems)
            if decl is None:
                return None
            self.raised.add(event_name)
            payload_node = value.get("payload") if isinstance(value, MappingNode) else None
            payload = self._payload(payload_node, scope, decl, span, problems)
            return Raise(event=event_name, payload=payload, span=span)
        if kind == "send" and isinstance(value, MappingNode):
            return self._send(value, span, scope, problems)
        if kind == "cancel" and isinstance(value, ScalarNode):
            self.cancelled_ids.append((str(value.value), value.span))
            return Cancel(id=str(value.value), span=span)
        if kind in ("pause", "resume") and isinstance(value, ScalarNode):
            name = str(value.value)
            self.controlled_names.append((kind, name, value.span))
            return Pause(name=name, span=span) if kind == "pause" else Resume(name=name, span=span)
        return None

    def _declared(
        self, verb: str, event_name: str, name_node: Node, problems: list[Diagnostic]
    ) -> EventDecl | None:
        """The declaration of the event a `raise` or `send` names, or None with an
        `unknown-event` diagnostic at the name."""
        decl = self.events.get(event_name)
        if decl is None:
            problems.append(
                Diagnostic(
                    slug=unknown_event.SLUG,
                    severity=Severity.ERROR,
                    message=f"{verb} of undeclared event '{event_name}'",
                    span=name_node.span,
                    notes=(f"declare it under events: ({', '.join(self.events) or 'none yet'})",),
                )
            )
        return decl

    def _send(
        self,
        value: MappingNode,
        span: SourceSpan,
        scope: ExpressionScope,
        problems: list[Diagnostic],
    ) -> Send | None:
        name_node = value.get("event")
        event_name = text(name_node)
        id_name = text(value.get("id"))
        if id_name is not None:
            self.sent_ids.add(id_name)  # even when the rest has errors: no cascade on cancel
        if event_name is None or name_node is None:
            return None
        to_node = value.get("to")
        if to_node is not None or value.get("reply") is not None:
            return self._addressed(value, event_name, to_node, span, scope, problems)
        decl = self._declared("send", event_name, name_node, problems)
        if decl is None:
            return None
        payload = self._payload(value.get("payload"), scope, decl, span, problems, verb="send")
        timing = self._timing(value, scope, problems)
        if timing is None:
            return None
        delay_ms, delay, at = timing
        return Send(
            event=event_name,
            payload=payload,
            delay_ms=delay_ms,
            delay=delay,
            at=at,
            id=id_name,
            span=span,
        )

    def _addressed(
        self,
        value: MappingNode,
        event_name: str,
        to_node: Node | None,
        span: SourceSpan,
        scope: ExpressionScope,
        problems: list[Diagnostic],
    ) -> Send | None:
        """A `send` with `to:`: its event belongs to the receiver's chart (lint checks it
        there), so the payload is typed by its expressions only; never delayed."""
        reply_node = value.get("reply")
        timed = [key for key in ("delay", "at", "id") if value.get(key) is not None]
        target = self.targets.target(to_node, reply_node, scope, problems)
        if target is None:
            return None  # its errors are reported
        if timed and isinstance(target, ToInstance | ToAddress):
            node = value.get(timed[0])
            assert node is not None
            whom = "another instance" if isinstance(target, ToInstance) else "an address"
            problems.append(
                _schema_error(
                    f"a send to {whom} cannot be delayed or named ('{timed[0]}:')",
                    node.span,
                    "a delayed send arms a timer of this instance; it can address the parent "
                    "or a child (`to: parent`, `to: <invoke id>`): send to this instance with "
                    "a delay, and send the message when it fires",
                )
            )
            return None
        payload = self._payload(value.get("payload"), scope, None, span, problems)
        timing = self._timing(value, scope, problems)
        if timing is None:
            return None
        delay_ms, delay, at = timing
        return Send(
            event=event_name,
            payload=payload,
            delay_ms=delay_ms,
            delay=delay,
            at=at,
            id=text(value.get("id")),
            span=span,
            to=target,
        )

    def _timing(
        self, value: MappingNode, scope: ExpressionScope, problems: list[Diagnostic]
    ) -> tuple[int | None, Expression | None, Expression | None] | None:
        """A send's `delay:` (a literal in milliseconds, or an expression) and `at:`, or
        None when one has errors (reported)."""
        delay_ms: int | None = None
        delay = at = None
        ok = True
        if (delay_node := value.get("delay")) is not None:
            read = read_delay(delay_node, scope, "send 'delay'", problems)
            ok = read is not None
            if read is not None:
                delay_ms, delay = read.delay_ms, read.expression
        if (at_node := value.get("at")) is not None:
            at = integer_expression(at_node, scope, "send 'at'", problems)
            ok = ok and at is not None
        return (delay_ms, delay, at) if ok else None

    def _payload(
        self,
        node: Node | None,
        scope: ExpressionScope,
        decl: EventDecl | None,
        effect_span: SourceSpan,
        problems: list[Diagnostic],
        *,
        verb: str = "raise",
    ) -> tuple[tuple[str, Expression], ...]:
        fields = {f.name: f for f in decl.fields} if decl is not None else {}
        out: list[tuple[str, Expression]] = []
        for key, expr_node in mapping_items(node):
            name = str(key.value)
            expected: ValueType | None = None
            if decl is not None:
                field = fields.get(name)
                if field is None:
                    problems.append(
                        Diagnostic(
                            slug=expression_type.SLUG,
                            severity=Severity.ERROR,
                            message=f"event {decl.name} has no payload field '{name}'",
                            span=key.span,
                        )
                    )
                    continue
                expected = field.type
            compiled = self._expression(
                expr_node, scope, expected, f"payload field '{name}'", problems
            )
            if compiled is not None:
                out.append((name, compiled))
        if decl is not None:
            given = {str(k.value) for k, _ in mapping_items(node)}
            missing = [f.name for f in decl.fields if not f.has_default and f.name not in given]
            if missing:
                problems.append(
                    Diagnostic(
                        slug=expression_type.SLUG,
                        severity=Severity.ERROR,
                        message=f"{verb} of {decl.name} is missing payload field(s): "
                        + ", ".join(missing),
                        span=node.span if node is not None else effect_span,
                    )
                )
        return tuple(out)

    def _expression(
        self,
        node: Node,
        scope: ExpressionScope,
        expected: ValueType | None,
        what: str,
        problems: list[Diagnostic],
    ) -> Expression | None:
        if not isinstance(node, ScalarNode):
            return None  # the schema admits only an expression or a literal here
        result = self.expressions.compile(node.value, node.span, scope, expected, what)
        if isinstance(result, tuple):
            problems.extend(result)
            return None
        return result


def _schema_error(message: str, span: SourceSpan, *notes: str) -> Diagnostic:
    return Diagnostic(
        slug=schema_rule.SLUG, severity=Severity.ERROR, message=message, span=span, notes=notes
    )

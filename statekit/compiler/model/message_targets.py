"""Where a `send` with `to:` goes: its parent, a child by invoke id, the member of its
family an address names, or another instance of a declared chart (with the event its
classification comes back as, `reply:`), compiled from the `to:` node."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.invocations import (
    PARENT,
    REPLY_REASON_FIELD,
    REPLY_STATUS_FIELD,
    MessageTarget,
    ToAddress,
    ToChild,
    ToInstance,
    ToParent,
)
from statekit.compiler.ir import EventDecl
from statekit.compiler.model.addresses import ADDRESS_KEY
from statekit.compiler.model.declarations import text
from statekit.compiler.rules import expression_type
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode
from statekit.compiler.value_types import STRING, BaseType, ValueType

ADDRESS_TYPE = ValueType(BaseType.STRING, nullable=True)
"""An address: a string, or null (`_event.origin` of an event from outside)."""

ExpressionOf = Callable[
    [Node, ExpressionScope, "ValueType | None", str, list[Diagnostic]], "Expression | None"
]
"""(node, scope, expected type, what it is, problems) -> the compiled expression, or None
with its errors in problems."""
DeclaredEvent = Callable[[str, str, Node, list[Diagnostic]], "EventDecl | None"]
"""(verb, event name, its node, problems) -> its declaration, or None with an error."""


class MessageTargets:
    """The `to:` of a chart's sends, compiled; every child target is kept so that
    `unknown_children` can check it against the chart's invoke ids."""

    def __init__(self, expression: ExpressionOf, declared: DeclaredEvent) -> None:
        self._expression = expression
        self._declared = declared
        self.child_targets: list[ToChild] = []  # every `send: {to: <invoke id>}`, to check

    def target(
        self,
        to_node: Node | None,
        reply_node: Node | None,
        scope: ExpressionScope,
        problems: list[Diagnostic],
    ) -> MessageTarget | None:
        """The target `to_node` names, or None when it has errors (reported)."""
        target: MessageTarget | None = None
        if isinstance(to_node, ScalarNode):
            name = str(to_node.value)
            target = ToParent(span=to_node.span) if name == PARENT else ToChild(name, to_node.span)
            if isinstance(target, ToChild):
                self.child_targets.append(target)
        elif isinstance(to_node, MappingNode) and (node := to_node.get(ADDRESS_KEY)) is not None:
            address = self._expression(node, scope, ADDRESS_TYPE, "address", problems)
            if address is None:
                return None
            target = ToAddress(address, to_node.span)
        elif isinstance(to_node, MappingNode):
            target = self._instance(to_node, reply_node, scope, problems)
        if reply_node is not None and target is not None and not isinstance(target, ToInstance):
            problems.append(
                _schema_error(
                    "'reply:' needs 'to: {chart, instance}'",
                    reply_node.span,
                    "a child's or parent's classification is not sent back: reply to another "
                    "instance only",
                )
            )
            return None
        return target

    def _instance(
        self,
        to_node: MappingNode,
        reply_node: Node | None,
        scope: ExpressionScope,
        problems: list[Diagnostic],
    ) -> ToInstance | None:
        instance_node = to_node.get("instance")
        if instance_node is None:
            return None  # the schema requires it
        instance = self._expression(instance_node, scope, STRING, "instance ID", problems)
        reply = text(reply_node)
        if reply is not None and reply_node is not None:
            decl = self._declared("reply", reply, reply_node, problems)
            if decl is None:
                return None
            carried = (REPLY_STATUS_FIELD, REPLY_REASON_FIELD)
            extra = [f.name for f in decl.fields if f.name not in carried]
            if extra:
                problems.append(
                    Diagnostic(
                        slug=expression_type.SLUG,
                        severity=Severity.ERROR,
                        message=f"reply event {reply} has field(s) a reply does not carry: "
                        + ", ".join(extra),
                        span=reply_node.span,
                        notes=("a reply's payload is {status: string, reason: string or null}",),
                    )
                )
                return None
        if instance is None:
            return None
        chart = text(to_node.get("chart")) or ""
        return ToInstance(chart=chart, instance=instance, reply=reply, span=to_node.span)

    def unknown_children(self, invoke_ids: frozenset[str]) -> list[Diagnostic]:
        """An error at each `send: {to: X}` whose X is no invoke id of the chart."""
        ids = ", ".join(sorted(invoke_ids)) or "none"
        found: list[Diagnostic] = []
        for target in self.child_targets:
            if target.invoke_id in invoke_ids:
                continue
            close = difflib.get_close_matches(target.invoke_id, sorted(invoke_ids), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            found.append(
                _schema_error(
                    f"send to '{target.invoke_id}': no invoke in the chart has this id",
                    target.span,
                    f"{hint}'to:' takes 'parent', an invoke id ({ids}) or {{chart, instance}}",
                )
            )
        return found


def _schema_error(message: str, span: SourceSpan, *notes: str) -> Diagnostic:
    return Diagnostic(
        slug=schema_rule.SLUG, severity=Severity.ERROR, message=message, span=span, notes=notes
    )

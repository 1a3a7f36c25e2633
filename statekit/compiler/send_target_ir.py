"""The IR of where a `send` with `to:` goes: its parent, a child by invoke id, another
instance of a declared chart, or the member of its family an address names."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression


@dataclass(frozen=True, slots=True)
class ToParent:
    """`send: {to: parent}`: the instance that invoked this one (none: the send is
    REJECTED in the receiving family step, see `statekit.engine.family`)."""

    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ToChild:
    """`send: {to: <invoke id>}`: the child this chart's invocation `invoke_id` started
    (not running: the message is dropped with a reason, see `statekit.engine.family`)."""

    invoke_id: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ToInstance:
    """`send: {to: {chart, instance}, reply}`: another instance of `chart`, whose ID is
    the string expression `instance`. Delivered outside the sender's family step (an
    inbox row in the runner); `reply` names this chart's event that brings back the
    receiver's classification (`{status, reason}`), None for fire-and-forget."""

    chart: str
    instance: Expression
    reply: str | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ToAddress:
    """`send: {to: {address: <expression>}}`: the member of the sender's family the
    string the expression computes names (`statekit.engine.addresses`): an instance
    ID, as `_event.origin` gives it, or SCXML's `#_scxml_<instance id>`, `#_parent`,
    `#_<invoke id>`. Resolved when the send runs; an address that names no member
    the family can reach (null, a finished child, another family's instance) sends
    `error.communication` back to the sender (`statekit.compiler.model.addresses`)."""

    address: Expression
    span: SourceSpan


MessageTarget = ToParent | ToChild | ToInstance | ToAddress
"""Where a `send` with `to:` goes (a `send` without one goes to its own instance)."""

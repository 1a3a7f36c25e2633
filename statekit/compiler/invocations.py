"""The IR of composition: a state's invocations of child charts and where a `send` goes.

A state's `invoke:` entries compile to `Invocation`s (`StateNode.invocations`,
and all of them in document order in `CompiledChart.invocations`); a top-level
final state's `output:` to `StateNode.output`; `send: {to: ...}` to a
`MessageTarget` on the `Send`. Each invocation declares two events of its chart
(in `CompiledChart.events`, with no `events:` entry): `done.invoke.<id>`, whose
payload is the invocation's `output:` fields, and `error.invoke.<id>`, whose
payload is `{reason: string}`. The child chart is another file: its input and
output types are checked across charts by lint, not by the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression

if TYPE_CHECKING:  # (a type only: `ir` imports this module)
    from statekit.compiler.ir import Effect

DONE_INVOKE_PREFIX = "done.invoke."
"""The prefix of the event a finished child raises in its parent: `done.invoke.<id>`."""
ERROR_INVOKE_PREFIX = "error.invoke."
"""The prefix of the event a failed child raises in its parent: `error.invoke.<id>`."""
ERROR_REASON_FIELD = "reason"
"""The one payload field of `error.invoke.<id>` (a string: why the child failed)."""
REPLY_STATUS_FIELD = "status"
"""A `reply:` event's field holding the receiver's classification (APPLIED...)."""
REPLY_REASON_FIELD = "reason"
"""A `reply:` event's field holding the receiver's rejection reason (null unless rejected)."""
PARENT = "parent"
"""`send: {to: parent}`: the reserved target naming the chart that invoked this one."""


def done_event(invoke_id: str) -> str:
    """`done.invoke.<invoke_id>`: the event the parent receives when the child finishes."""
    return DONE_INVOKE_PREFIX + invoke_id


def error_event(invoke_id: str) -> str:
    """`error.invoke.<invoke_id>`: the event the parent receives when the child fails."""
    return ERROR_INVOKE_PREFIX + invoke_id


def invocation_of_event(event: str) -> str | None:
    """The invoke id of a `done.invoke.<id>` or `error.invoke.<id>` event name, else None."""
    for prefix in (DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX):
        if event.startswith(prefix):
            return event[len(prefix) :]
    return None


@dataclass(frozen=True, slots=True)
class ChartCase:
    """One case of `chart: {by, cases}`: the value of `by` that starts `chart`; `span`
    is the case's key."""

    value: str | int | bool
    chart: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ChartChoice:
    """`chart: {by, cases}`: the child's chart chosen when it starts, by the value of
    `by` (over the parent's `ctx`, no event); a value with no case starts no child."""

    by: Expression
    cases: tuple[ChartCase, ...]
    span: SourceSpan

    def chart_for(self, value: object) -> str | None:
        """The chart of the case whose value is `value` (by type too: `1` is not `True`),
        None when no case has it."""
        for case in self.cases:
            if type(case.value) is type(value) and case.value == value:
                return case.chart
        return None


@dataclass(frozen=True, slots=True)
class Invocation:
    """`invoke: {id, chart, version, input, output, finalize}` of the state with id `state`.

    `input` holds the child's context fields (name, expression over this chart's
    `ctx`, no event), evaluated when the child starts: at the end of the macrostep
    that entered the state. `version` None means the newest version known of
    `chart`. The `output:` field specs are the payload of `done_event` in the
    chart's `events`. `span` is the invoke mapping. `finalize` are the `assign`
    effects run on every event from this child while `state` is active, before the
    event's transitions are selected (`statekit.engine.finalize_step`); they read
    `event.<field>` for the fields of `finalize_fields`, null when the event lacks one.
    `forward` (`forward: true`): every event the parent processes while the child runs
    is also sent to the child (`statekit.engine.family_forwarding`).
    """

    id: str
    state: int
    chart: str
    version: int | None
    input: tuple[tuple[str, Expression], ...]
    span: SourceSpan
    description: str | None = None
    finalize: tuple[Effect, ...] = ()
    finalize_fields: tuple[str, ...] = ()
    choice: ChartChoice | None = None
    forward: bool = False

    @property
    def charts(self) -> tuple[str, ...]:
        """Every chart the invocation may start: its chart, or each case's (distinct, in
        case order)."""
        if self.choice is None:
            return (self.chart,)
        return tuple(dict.fromkeys(case.chart for case in self.choice.cases))

    @property
    def done_event(self) -> str:
        """`done.invoke.<id>`."""
        return done_event(self.id)

    @property
    def error_event(self) -> str:
        """`error.invoke.<id>`."""
        return error_event(self.id)


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

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

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.effect_ir import Effect
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.send_target_ir import MessageTarget as MessageTarget
from statekit.compiler.send_target_ir import ToAddress as ToAddress
from statekit.compiler.send_target_ir import ToChild as ToChild
from statekit.compiler.send_target_ir import ToInstance as ToInstance
from statekit.compiler.send_target_ir import ToParent as ToParent

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

"""The IR of effects: what a transition's `do:`, a state's `entry:`/`exit:` and an
invocation's `finalize:` compile to (`statekit.compiler.model.effect_compiler`), and
the condition (`GuardCheck`) a transition's guard and an `if` branch test."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.send_target_ir import MessageTarget


@dataclass(frozen=True, slots=True)
class GuardCheck:
    """One condition of a transition: a named guard or the inline `if`.

    `name` is None for an inline `if`; `reason` is the rejection reason when it fails.
    """

    name: str | None
    expression: Expression
    reason: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Assign:
    """`assign: {field: expr}` — context updates, applied in order."""

    assignments: tuple[tuple[str, Expression], ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Emit:
    """`emit: {type, payload}` — an outbox message; never executed inside the step."""

    type: str
    payload: tuple[tuple[str, Expression], ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Raise:
    """`raise: EVENT` — an internal event processed in the same macrostep."""

    event: str
    payload: tuple[tuple[str, Expression], ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Send:
    """`send: {event, payload, delay | at, id}` — an event for this instance's external queue.

    It is processed after the current macrostep, never inside it. At most one of
    `delay_ms` (a literal `delay:`; 0 means no delay), `delay` (an integer
    expression in milliseconds) and `at` (an integer expression, epoch
    milliseconds) is set; none means no delay. `id` names the timer a delayed
    send arms (for `cancel:`), None when not given. `to` is the receiver of a
    send to another instance (`statekit.compiler.send_target_ir`; only one to the
    parent or a child may be delayed), None for this instance's own queue.
    """

    event: str
    payload: tuple[tuple[str, Expression], ...]
    delay_ms: int | None
    delay: Expression | None
    at: Expression | None
    id: str | None
    span: SourceSpan
    to: MessageTarget | None = None

    @property
    def delayed(self) -> bool:
        """Whether this send arms a timer (a non-zero literal, a `delay:` expression or `at:`)."""
        return bool(self.delay_ms) or self.delay is not None or self.at is not None


@dataclass(frozen=True, slots=True)
class Cancel:
    """`cancel: NAME` — removes the armed timer of the `send` with that `id` (none: nothing)."""

    id: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Pause:
    """`pause: NAME` — pauses the armed timers named NAME (a named `after` timer's `id:` or
    a delayed `send`'s `id:`), keeping their remaining time; none armed, or all paused
    already: nothing (see docs/timers.md, "Pausing a timer")."""

    name: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Resume:
    """`resume: NAME` — arms the paused timers named NAME again, due after their remaining
    time; none paused: nothing."""

    name: str
    span: SourceSpan


TimerControl = Pause | Resume
"""The effects that pause and resume a named timer."""


@dataclass(frozen=True, slots=True)
class ConditionalBranch:
    """One `cond`/`then` pair of an `if` effect: `effects` run when `check` holds."""

    check: GuardCheck
    effects: tuple[Effect, ...]


@dataclass(frozen=True, slots=True)
class Conditional:
    """`if: {cond, then, elif, else}` — SCXML `<if>/<elseif>/<else>`: the effects of the
    first branch whose condition holds run (conditions are evaluated in order, each only
    when the ones before it failed), or `otherwise` when none does."""

    branches: tuple[ConditionalBranch, ...]
    otherwise: tuple[Effect, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Foreach:
    """`foreach: {array, item, index, do}` — SCXML `<foreach>`: `effects` run once per
    element of the list `array` (evaluated once, before the first), in order, with the
    read-only locals `item` (the element) and `index` (its position from 0, when named);
    an empty list runs nothing. `nonempty` is the condition `len(array) > 0`, the choice
    the analysis makes for it."""

    array: Expression
    item: str
    index: str | None
    effects: tuple[Effect, ...]
    nonempty: GuardCheck
    span: SourceSpan


Effect = Assign | Emit | Raise | Send | Cancel | Pause | Resume | Conditional | Foreach

"""What a step returns: the classification, the new state, the outbox and the evidence.

Every external event ends in exactly one `Result` (see `statekit.engine.step`):
`APPLIED` (at least one transition fired), `ALREADY_APPLIED` (nothing fired
and an active state lists the event in `already`) or `REJECTED` with a
reason. Reasons are plain strings: the chart's own codes (a guard's `else`,
a `reject` entry) or one of the engine's codes below.

Evidence is data (`statekit.engine.evidence`): one frozen `Microstep` per microstep of the
macrostep, listing the transitions fired, the states exited and entered, the
context changes, the messages emitted and the internal events raised. Payload
fields declared `secret: true` (and context fields declared secret, and
values assigned from a secret payload field) appear as `REDACTED`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

from statekit.engine.evidence import (
    REDACTED,
    ContextChange,
    EmittedMessage,
    FiredTransition,
    Microstep,
)
from statekit.engine.family_outputs import InvocationCancel, InvocationStart, OutgoingMessage
from statekit.engine.invocation_changes import Moves, invocation_changes
from statekit.engine.state import State
from statekit.engine.timer_plan import resolve
from statekit.engine.timers import ArmedTimer, SentEvent, TimerRun

__all__ = [
    "CLOCK_REQUIRED",
    "ENGINE_REASONS",
    "EVALUATION_ERROR",
    "INVALID_PAYLOAD",
    "INVARIANT_VIOLATION",
    "LIVELOCK",
    "PAUSED_TIMER",
    "REDACTED",
    "STALE_TIMER",
    "TERMINAL_STATE",
    "TOO_MANY_TIMERS",
    "UNDEFINED_TRANSITION",
    "UNKNOWN_EVENT",
    "ContextChange",
    "EmittedMessage",
    "FiredTransition",
    "Microstep",
    "Result",
    "Status",
]

UNKNOWN_EVENT = "UNKNOWN_EVENT"
"""The event type is not declared in the chart."""
INVALID_PAYLOAD = "INVALID_PAYLOAD"
"""The payload misses a required field, has an unknown one, or a value of the wrong type."""
TERMINAL_STATE = "TERMINAL_STATE"
"""The chart is final and no active final state classifies the event."""
UNDEFINED_TRANSITION = "UNDEFINED_TRANSITION"
"""No transition, guard, `already` or `reject` entry applies to the event here."""
INVARIANT_VIOLATION = "INVARIANT_VIOLATION"
"""The macrostep would break an invariant (`Result.invariant` names it); nothing changed."""
EVALUATION_ERROR = "EVALUATION_ERROR"
"""A guard, effect or invariant expression failed (division by zero...); nothing changed."""
LIVELOCK = "LIVELOCK"
"""The macrostep did not settle within the chart's bound on microsteps; nothing changed."""
TOO_MANY_TIMERS = "TOO_MANY_TIMERS"
"""The macrostep would leave more than `timers.MAX_ARMED_TIMERS` timers armed; nothing
changed."""
STALE_TIMER = "STALE_TIMER"
"""`Chart.fire` of a timer that is not armed (its state was left, it was cancelled,
delivered or replaced, or its generation differs); nothing changed."""
PAUSED_TIMER = "PAUSED_TIMER"
"""`Chart.fire` (or `consume`) of a timer that is armed but paused (`pause:`): it has no
due time until a `resume:`, so, like a stale one, it is not delivered; nothing changed."""
NOT_DELIVERABLE = frozenset({STALE_TIMER, PAUSED_TIMER})
"""The reasons of a delivery that finds no running timer to deliver: nothing changed."""
CLOCK_REQUIRED = "CLOCK_REQUIRED"
"""The chart reads `now` but the step was given no clock reading (`now_ms`); nothing
changed."""

ENGINE_REASONS = frozenset(
    {
        CLOCK_REQUIRED,
        UNKNOWN_EVENT,
        INVALID_PAYLOAD,
        TERMINAL_STATE,
        UNDEFINED_TRANSITION,
        INVARIANT_VIOLATION,
        EVALUATION_ERROR,
        LIVELOCK,
        STALE_TIMER,
        PAUSED_TIMER,
        TOO_MANY_TIMERS,
    }
)
"""The reason codes the engine itself produces (the others come from the chart)."""


_NO_INVOCATION_CHANGES: tuple[tuple[InvocationStart, ...], tuple[InvocationCancel, ...]] = ((), ())


class Status(enum.Enum):
    """The classification of one external event."""

    APPLIED = "APPLIED"
    ALREADY_APPLIED = "ALREADY_APPLIED"
    REJECTED = "REJECTED"


class Result:
    """The classified outcome of `Chart.send` (immutable: read-only properties).

    `state` is the new state when applied, else the input state itself.
    `reason` is None when applied. `message` explains a rejection in words
    (never with a secret value). `invariant` names the broken invariant of an
    `INVARIANT_VIOLATION`. `evidence` lists the microsteps (for an
    `INVARIANT_VIOLATION`, those that were rolled back; empty otherwise).

    Time (`statekit.engine.timers`): `timers_armed` and `timers_cancelled` list
    the timers the step armed and cancelled (a timer armed and cancelled in the
    same macrostep is in neither), `sent` its undelayed `send`s, and `timer` the
    timer a delivery (`Chart.fire`) consumed. A delivery consumes its timer even
    when it is rejected (other than `STALE_TIMER`): its `state` is then the
    input state without that timer, the one rejection whose state differs.

    Composition (`statekit.engine.family_outputs`): `invocations_started` and
    `invocations_cancelled` list the children an applied step starts and cancels,
    `messages` its undelayed `send`s with `to:`; all empty for a chart without
    `invoke:` and `send: {to: ...}`, at no cost (derived on first read).
    """

    __slots__ = (
        "_emitted",
        "_event",
        "_event_id",
        "_evidence",
        "_invariant",
        "_invocations",
        "_message",
        "_moves",
        "_reason",
        "_state",
        "_status",
        "_timer",
        "_timing",
        "_trace",
    )
    _timing: TimerRun | list[Any] | None  # set by a step that touched a timer (a compiled
    # macrostep's is its pending record, replayed on first read: statekit.engine.timer_plan)
    _timer: ArmedTimer | None  # set by a delivery
    _invocations: tuple[tuple[InvocationStart, ...], tuple[InvocationCancel, ...]]
    _moves: Sequence[Moves]  # set by the step for a chart that invokes: each microstep's
    # exited and entered states, so that its starts and cancels need no evidence

    def __init__(
        self,
        status: Status,
        reason: str | None,
        state: State,
        event: str,
        event_id: str | None = None,
        emitted: tuple[EmittedMessage, ...] = (),
        trace: Callable[[], tuple[Microstep, ...]] | None = None,
        invariant: str | None = None,
        message: str | None = None,
    ) -> None:
        self._status = status
        self._reason = reason
        self._state = state
        self._event = event
        self._event_id = event_id
        self._emitted = emitted
        self._trace = trace
        self._invariant = invariant
        self._message = message
        self._evidence: tuple[Microstep, ...] | None = None
        # the macrostep's timers (read on access) and the delivered timer, set by the step
        # when there is time (two stores are cheaper than the AttributeError of a slot
        # never set, which the runner's reads of `timers_armed` and `sent` would raise)
        self._timing = self._timer = None
        # `_invocations` is set on first read, only for a chart that invokes: a chart
        # without `invoke:` pays nothing here (bench/engine_core.py)

    @property
    def status(self) -> Status:
        """APPLIED, ALREADY_APPLIED or REJECTED."""
        return self._status

    @property
    def reason(self) -> str | None:
        """The reason code of a rejection; None otherwise."""
        return self._reason

    @property
    def state(self) -> State:
        """The state after the event (the input state unless applied)."""
        return self._state

    @property
    def event(self) -> str:
        """The event type that was sent."""
        return self._event

    @property
    def event_id(self) -> str | None:
        """The event ID given to `send`, if any."""
        return self._event_id

    @property
    def emitted(self) -> tuple[EmittedMessage, ...]:
        """Outbox messages of the macrostep, in the order the effects ran."""
        return self._emitted

    @property
    def timers_armed(self) -> tuple[ArmedTimer, ...]:
        """The timers this step armed that are still armed after it, in arming order."""
        timing = self._timing_run()
        return () if timing is None else timing.armed_now()

    @property
    def timers_cancelled(self) -> tuple[ArmedTimer, ...]:
        """The timers armed before this step that it cancelled or replaced, in order."""
        timing = self._timing_run()
        return () if timing is None else timing.cancelled()

    @property
    def sent(self) -> tuple[SentEvent, ...]:
        """The undelayed `send`s of the macrostep, in order: events for this instance's
        external queue, to be processed after this one."""
        timing = self._timing
        if not isinstance(timing, TimerRun):  # none, or a compiled macrostep's: it never sends
            return ()
        return timing.sent()

    @property
    def messages(self) -> tuple[OutgoingMessage, ...]:
        """The undelayed `send`s with `to:` of the macrostep, in order: events for the
        parent, a child or another instance (`statekit.engine.family` routes them)."""
        timing = self._timing
        if not isinstance(timing, TimerRun):  # none, or a compiled macrostep's: it never sends
            return ()
        return timing.messages()

    @property
    def sends_in_order(self) -> tuple[SentEvent | OutgoingMessage, ...]:
        """Every undelayed `send` of the macrostep in effect order: `sent` and `messages`
        interleaved as the effects ran (the family step queues them so)."""
        timing = self._timing
        if not isinstance(timing, TimerRun):
            return ()
        return timing.sends_in_order()

    @property
    def invocations_started(self) -> tuple[InvocationStart, ...]:
        """The children this step starts, in entry order (states with `invoke:` entered
        and not left), their input evaluated against the new state."""
        return self._invocation_changes()[0]

    @property
    def invocations_cancelled(self) -> tuple[InvocationCancel, ...]:
        """The children this step cancels, in exit order (states with `invoke:` left)."""
        return self._invocation_changes()[1]

    def _invocation_changes(
        self,
    ) -> tuple[tuple[InvocationStart, ...], tuple[InvocationCancel, ...]]:
        state = self._state
        chart = state._config.tables.chart
        if not chart.invocations or self._status is not Status.APPLIED:
            return _NO_INVOCATION_CHANGES
        try:
            return self._invocations
        except AttributeError:  # the first read
            try:
                moves = self._moves
            except AttributeError:  # a step that kept none: its evidence says the same
                moves = self.evidence
            changes = invocation_changes(chart, moves, state._context, state.active_ids)
            self._invocations = changes
            return changes

    def _timing_run(self) -> TimerRun | None:
        timing = self._timing
        if timing is None or timing.__class__ is TimerRun:
            return timing
        return resolve(timing)  # type: ignore[arg-type]

    @property
    def timer(self) -> ArmedTimer | None:
        """The timer this step delivered and consumed (`Chart.fire`), else None."""
        return self._timer

    @property
    def evidence(self) -> tuple[Microstep, ...]:
        """The microsteps, as data (built on first access)."""
        evidence = self._evidence
        if evidence is None:  # not built yet
            evidence = self._evidence = () if self._trace is None else self._trace()
        return evidence

    @property
    def invariant(self) -> str | None:
        """The broken invariant's name for INVARIANT_VIOLATION; None otherwise."""
        return self._invariant

    @property
    def message(self) -> str | None:
        """A human explanation of a rejection (no secret values); None when applied."""
        return self._message

    @property
    def applied(self) -> bool:
        """Whether the event was APPLIED."""
        return self._status is Status.APPLIED

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return (
            self._status is other._status
            and self._reason == other._reason
            and self._event == other._event
            and self._event_id == other._event_id
            and self._invariant == other._invariant
            and self._state == other._state
            and self._emitted == other._emitted
            and self.timers_armed == other.timers_armed
            and self.timers_cancelled == other.timers_cancelled
            and self.sent == other.sent
            and self.messages == other.messages
            and self.timer == other.timer
            and self.evidence == other.evidence
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [f"status={self._status.value}", f"event={self._event!r}"]
        if self._reason is not None:
            parts.append(f"reason={self._reason!r}")
        if self._invariant is not None:
            parts.append(f"invariant={self._invariant!r}")
        if self._emitted:
            parts.append(f"emitted={[m.type for m in self._emitted]!r}")
        if self.timer is not None:
            parts.append(f"timer={self.timer.id!r}")
        if self.timers_armed:
            parts.append(f"armed={[t.id for t in self.timers_armed]!r}")
        if self.timers_cancelled:
            parts.append(f"cancelled={[t.id for t in self.timers_cancelled]!r}")
        if self.sent:
            parts.append(f"sent={[m.event for m in self.sent]!r}")
        if self.messages:
            parts.append(f"messages={[(m.to, m.event) for m in self.messages]!r}")
        parts.append(f"state={self._state!r}")
        return f"Result({', '.join(parts)})"

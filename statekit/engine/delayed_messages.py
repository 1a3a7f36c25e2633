"""A delayed `send` to the parent or a child: a timer of the sender that delivers a message.

`send: {to: parent | <invoke id>, event, delay | at, id}` arms a timer of the
sending instance like any delayed `send` (`statekit.engine.timers`: `id:` names it
for `cancel:`, `pause:` and `resume:`; arming an id that is armed replaces it), whose
`ArmedTimer.to` names the receiver. Time is an input: the timer fires when a
driver's clock passes its due time, as the chart's own timers.

Its delivery (`Chart.fire`) classifies nothing in the sender: the step is APPLIED
with no microstep, the timer consumed, and the message (an `OutgoingMessage`, in
`Result.messages`) is what the step produces, routed by the family step
(`statekit.engine.family`) as an undelayed `send` with `to:` would be, exactly once.

A sender that has ended sends nothing (SCXML cancels a session's delayed sends when
it ends): a cancelled member's timers go with it, and a timer of a member in a
top-level final state is consumed REJECTED `TERMINAL_STATE` when it fires, with no
message.
"""

from __future__ import annotations

from types import MappingProxyType

from statekit.compiler.invocations import PARENT, MessageTarget, ToChild, ToParent
from statekit.engine.family_outputs import MessageKind, OutgoingMessage
from statekit.engine.result import TERMINAL_STATE, Result, Status
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer, TimerRun


def receiver(target: MessageTarget) -> str:
    """What a timer stores of a delayed send's receiver: "parent" or the invoke id (the
    compiler refuses a delay on a send to another instance)."""
    if isinstance(target, ToParent):
        return PARENT
    assert isinstance(target, ToChild)
    return target.invoke_id


def message_of(timer: ArmedTimer) -> OutgoingMessage:
    """The message a delayed send's timer delivers."""
    to = timer.to or PARENT
    kind = MessageKind.PARENT if to == PARENT else MessageKind.CHILD
    return OutgoingMessage(kind, to, timer.event, MappingProxyType(dict(timer.payload)))


def delivered(
    without: State, timer: ArmedTimer, event_id: str | None, now_ms: int | None
) -> Result:
    """The delivery of `timer` (a delayed send with `to:`) from `without`, the sender's
    state without it (see the module docstring)."""
    if without.is_final:
        message = (
            f"the sender is in a final state: its delayed send of {timer.event!r} "
            f"to {timer.to!r} is not delivered"
        )
        result = Result(Status.REJECTED, TERMINAL_STATE, without, timer.event, event_id,
                        message=message)  # fmt: skip
    else:
        result = Result(Status.APPLIED, None, without, timer.event, event_id)
        run = TimerRun(without._timers, now_ms)
        run.send(0, message_of(timer))
        result._timing = run
    result._timer = timer
    return result

"""`_event` as a truth value (`<if cond="_event">`): whether an event is bound yet.

SCXML leaves `_event` unbound until the first event is taken up: in the start's
`<onentry>` it is unset, afterwards it is the event being processed. statekit binds
`_event` the same way, and reads its fields typed nullable where no event may be bound
(entry and exit actions, eventless transitions): `_event.name is not None` is the test.
"""

from __future__ import annotations

from typing import Final

EVENT_IS_BOUND: Final = "(_event.name is not None)"
"""The statekit condition that an event is bound."""

_BEFORE = {None, "(", "!", "not", "&&", "||", "and", "or"}
_AFTER = {None, ")", "&&", "||", "and", "or"}


def event_bound(tokens: list[tuple[str, str]], index: int) -> str | None:
    """`EVENT_IS_BOUND` when `tokens[index]` is `_event` standing alone as a truth value
    (the whole condition, or an operand of `!`, `&&`, `||`); else None."""
    if tokens[index][1] != "_event":
        return None
    before = tokens[index - 1][1] if index > 0 else None
    after = tokens[index + 1][1] if index + 1 < len(tokens) else None
    return EVENT_IS_BOUND if before in _BEFORE and after in _AFTER else None

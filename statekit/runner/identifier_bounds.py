"""The one bound on every identifier and key the stores index: `MAX_ID_BYTES`.

PostgreSQL refuses a btree index entry over 2,704 bytes (`ProgramLimitExceeded`)
and SQLite has no such limit, so an unbounded identifier behaved differently per
store. The widest indexes hold three text columns ((instance, event type,
idempotency key) among the events; (consumer, instance, message) in the inbox),
so each identifier gets 512 UTF-8 bytes: three of them with their headers stay
near 1,560 bytes, well under the limit, whatever else an entry carries. The
bound is checked before the database sees a value, on both stores alike:
instance IDs, event IDs and event types when a command is made (ValueError),
the chart's event names, timer names and
`send` ids when a `Runner` is made (`IdentifierBoundError`), the encoded idempotency
key when an event is decided (a classified rejection,
`KEY_TOO_LONG`; a timer delivery carrying such a key consumes its timer with
that reason instead of poisoning the worker).
"""

from __future__ import annotations

from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart
from statekit.engine.family_members import MAX_CHILD_ID_BYTES
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.engine.state_timers import send_ids
from statekit.engine.timers import ArmedTimer
from statekit.runner.outcome import KEY_TOO_LONG

MAX_ID_BYTES = MAX_CHILD_ID_BYTES
"""The most UTF-8 bytes of an instance ID, event ID, event type or encoded idempotency
key (see the module docstring for why); a family's child IDs are held to it by the
engine (`family_members.child_instance_id` hashes one past it)."""


def utf8_length(value: str) -> int:
    """The length of `value` in UTF-8 bytes (a lone surrogate counts as its 3 bytes)."""
    if len(value) * 4 <= MAX_ID_BYTES:  # cannot be over the bound: skip the encoding
        return len(value)
    return len(value.encode("utf-8", "surrogatepass"))


def too_long(value: str, what: str) -> str | None:
    """Why `value` cannot be a `what` (over `MAX_ID_BYTES` UTF-8 bytes), or None."""
    if len(value) * 4 <= MAX_ID_BYTES:
        return None
    size = utf8_length(value)
    if size <= MAX_ID_BYTES:
        return None
    return f"{what} is {size} UTF-8 bytes; the bound is {MAX_ID_BYTES} (MAX_ID_BYTES)"


def chart_problems(chart: CompiledChart) -> list[str]:
    """Why the chart cannot run in a store: each event name, `after` timer name and `send`
    id over `MAX_ID_BYTES` (they become event types and the IDs of timer deliveries,
    `statekit.timer/<id>/<generation>`, a few bytes longer, still far under the index
    limit); empty when it can."""
    names = [("event", name) for name in chart.events]
    names += [("timer", decl.name) for decl in chart.timers]
    names += [("send id", pair.split("\0", 1)[1]) for pair in sorted(send_ids(chart))]
    problems = []
    for what, name in names:
        problem = too_long(name, f"the {what} {name[:40]!r}…")
        if problem is not None:
            problems.append(f"chart {chart.name!r}: {problem}")
    return problems


def key_too_long(key: str | None) -> str | None:
    """Why an event's encoded idempotency `key` cannot be recorded, or None."""
    if key is None:
        return None
    return too_long(key, "its idempotency key (encoded)")


def key_refusal(key: str | None, event_id: str) -> str | None:
    """The message of the `KEY_TOO_LONG` rejection of the event `event_id` whose encoded
    idempotency key is `key`, or None: the key is within the bound (or there is none).
    What `InstanceTransaction.decide` records and `verify` expects of the replay."""
    why = key_too_long(key)
    return None if why is None else f"event {event_id!r}: {why}"


def consume_oversized(
    chart: Chart, state: State, timer: ArmedTimer, why: str, event_id: str
) -> Result:
    """The delivery of `timer` whose event's key is over the bound (`why`): the timer
    consumed without its event, REJECTED as `KEY_TOO_LONG`; what
    `InstanceTransaction.fire` records and the history replay gives."""
    return chart.consume(
        state,
        timer.id,
        generation=timer.generation,
        reason=KEY_TOO_LONG,
        message=f"timer {timer.id!r}: {why}; the timer is consumed",
        event_id=event_id,
    )

"""Durable timers: how the runner stores the engine's armed timers and names their events.

The engine's `State` is the truth about which timers are armed (`State.timers`,
each with the generation that armed it and its due time). The runner stores
it in the transaction of the event that changed it:

- `statekit_timers`: one row per armed timer, holding the timer itself
  (`TimerRow.record`, canonical JSON) beside its due time (indexed), so that a
  worker finds what is due without reading every instance, and the instance's
  timers are read from its rows (`stored_state.state_of`);
- the instance row's `timers` column: only the arming counter
  (`{"timer_generation":N}`, None while the instance never armed a timer).

An event writes only what it changed: the rows of the timers it armed and
deletes those of the timers it cancelled or consumed (`PendingTimerRows`),
whatever the number of timers armed. Nothing else creates or removes them.

Event IDs the runner gives (under the reserved `statekit.` prefix, so no
caller's ID can collide): a timer delivery is `statekit.timer/<timer id>/<generation>`
(`timer_event_id`), the same for every worker and every retry, so a second
firing is a duplicate of the first; an undelayed `send` becomes the event
`statekit.send/<root>/<n>` (`sent_event_id`): the n-th event sent, in the
order of the external queue, after the external event (or timer delivery,
or creation) `<root>`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from statekit.compiler.canonical import canonical_json, canonical_string
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.store.rows import STORED_INT_MAX, STORED_INT_MIN, TimerRow, positional
from statekit.runner.store.timer_records import counter_text

TIMER_PREFIX = "statekit.timer/"
"""The start of a timer delivery's event ID."""
SEND_PREFIX = "statekit.send/"
"""The start of the event ID of an event an undelayed `send` put on the external queue."""


def timer_event_id(timer_id: str, generation: int) -> str:
    """The event ID of the delivery of the timer `timer_id` armed at `generation`."""
    return f"{TIMER_PREFIX}{timer_id}/{generation}"


def parse_timer_event_id(event_id: str) -> tuple[str, int] | None:
    """(timer ID, generation) of a timer delivery's event ID; None for any other ID."""
    if not event_id.startswith(TIMER_PREFIX):
        return None
    timer_id, _, generation = event_id[len(TIMER_PREFIX) :].rpartition("/")
    if not timer_id or not generation.isdigit() or generation != str(int(generation)):
        return None
    return timer_id, int(generation)


def sent_event_id(root: str, n: int) -> str:
    """The event ID of the `n`-th (1, 2, …) event sent without delay after event `root`."""
    return f"{SEND_PREFIX}{root}/{n}"


def timers_text(state: State) -> str | None:
    """The instance row's `timers` column for `state`: its arming counter (None: it never
    armed a timer); the timers themselves are their rows."""
    generation = state.timer_generation
    return counter_text(generation) if generation else None


def armed_text(timer: ArmedTimer) -> str:
    """`canonical_json(timer.to_data())`: the keys in sorted order, the strings and the
    payload in canonical JSON (an `after` timer's event is its ID: encoded once)."""
    delay, due, owner, timer_id, payload = (
        timer.delay_ms, timer.due_ms, timer.owner, timer.id, timer.payload,
    )  # fmt: skip
    head = canonical_string(timer_id)
    event = head if timer.event == timer_id else canonical_string(timer.event)
    paused = timer.paused_ms  # only a paused timer has the key (sorted between the two)
    return (
        f'{{"delay_ms":{"null" if delay is None else delay},'
        f'"due_ms":{"null" if due is None else due},'
        f'"event":{event},"generation":{timer.generation},"id":{head},'
        f'"owner":{"null" if owner is None else canonical_string(owner)},'
        f'{"" if paused is None else f""""paused_ms":{paused},"""}'
        f'"payload":{payload_text(payload) if payload else "{}"}'
        f'{"" if timer.to is None else f""","to":{canonical_string(timer.to)}"""}}}'
    )


def payload_text(payload: Mapping[str, Any]) -> str:
    """A timer's payload in canonical JSON (the empty one, an `after` timer's, without
    encoding it: a third of what writing a timer row cost)."""
    return canonical_json(dict(payload)) if payload else "{}"


def timer_row(instance_id: str, timer: ArmedTimer, sequence: int) -> TimerRow:
    """The stored row of an armed timer (armed by the event at `sequence`, 0: creation); its
    due time within the stored integers' range (a later one never comes; an earlier one is
    long past), the largest one for a timer armed without a clock or paused (it never
    comes: a worker never claims a paused timer; its `resume:` writes the row again)."""
    due = timer.due_ms
    if due is None:
        due = STORED_INT_MAX
    elif not STORED_INT_MIN <= due <= STORED_INT_MAX:
        due = min(max(due, STORED_INT_MIN), STORED_INT_MAX)
    # built positionally (`rows.positional`): once per timer armed, on a timed event
    return _timer_row(
        instance_id,
        timer.id,
        timer.generation,
        timer.event,
        payload_text(payload) if (payload := timer.payload) else "{}",
        due,
        sequence,
        armed_text(timer),
    )


_timer_row = positional(
    TimerRow, "instance_id", "timer_id", "generation", "event", "payload", "due_ms", "sequence",
    "record",
)  # fmt: skip


class PendingTimerRows:
    """The timer rows a transaction has still to write: the IDs whose rows it deletes and
    the rows it writes (over a row of the same ID), built from what each event armed,
    cancelled or consumed, so that its cost is that of the timers it changed."""

    __slots__ = ("deleted", "inserted")

    def __init__(
        self, deleted: dict[str, None] | None = None, inserted: dict[str, TimerRow] | None = None
    ) -> None:
        self.deleted: dict[str, None] = {} if deleted is None else deleted  # ordered set
        self.inserted: dict[str, TimerRow] = {} if inserted is None else inserted

    def armed(self, row: TimerRow) -> None:
        """The timer of `row` was armed: its row is written over one of the same ID (an
        upsert), so a delete of that ID queued before is not needed."""
        self.deleted.pop(row.timer_id, None)
        self.inserted[row.timer_id] = row

    def removed(self, timer: ArmedTimer) -> None:
        """The timer was cancelled, replaced or consumed: its row goes (a row this
        transaction was to write for it is dropped)."""
        row = self.inserted.get(timer.id)
        if row is not None and row.generation == timer.generation:
            del self.inserted[timer.id]
        self.deleted[timer.id] = None

    def copy(self) -> PendingTimerRows:
        """An independent copy (a transaction's mark)."""
        return PendingTimerRows(dict(self.deleted), dict(self.inserted))

    def rows(self, instance_id: str) -> tuple[tuple[tuple[str, str], ...], tuple[TimerRow, ...]]:
        """(deleted `(instance ID, timer ID)` pairs, inserted rows), in the order the store
        writes them (deletes first)."""
        deleted = tuple([(instance_id, timer_id) for timer_id in self.deleted])
        return deleted, tuple(self.inserted.values())


def expected_rows(
    instance_id: str, state: State, armed_at: Mapping[tuple[str, int], int]
) -> list[TimerRow]:
    """The rows the store holds for `state`'s armed timers (what `verify` compares)."""
    return [timer_row(instance_id, t, armed_at.get((t.id, t.generation), 0)) for t in state.timers]


def row_problem(row: TimerRow, state: State) -> str | None:
    """Why the stored timer row does not fit the instance's state (None: it fits): a worker
    fires only a row that names a timer armed in the state, with its generation, event,
    payload and due time."""
    timer = state.timer(row.timer_id) if isinstance(row.timer_id, str) else None
    if timer is None:
        return "the instance has no such timer armed (the row is left over or altered)"
    expected = timer_row(row.instance_id, timer, row.sequence)
    for name in ("generation", "event", "payload", "due_ms"):
        stored, wanted = getattr(row, name), getattr(expected, name)
        if type(stored) is not type(wanted) or stored != wanted:
            return f"its {name} is {stored!r}, the instance's timer has {wanted!r}"
    if timer.paused_ms is not None:
        return f"the instance's timer is paused ({timer.paused_ms} ms left)"
    if timer.due_ms is None:
        return "the instance's timer has no due time (it was armed without a clock)"
    return None


def row_data(row: TimerRow, now_ms: int) -> dict[str, Any]:
    """The JSON-ready form `statekit timers` lists: instance, timer, event, generation,
    due time (epoch ms and ISO 8601 UTC) and how long until it is due (negative: overdue);
    a paused timer has no due time (`due_ms` and `in_ms` null) and `paused_ms`, the time
    it has left."""
    paused = paused_ms(row)
    if paused is not None:
        return {
            "instance": row.instance_id,
            "timer": row.timer_id,
            "event": row.event,
            "generation": row.generation,
            "due_ms": None,
            "in_ms": None,
            "paused_ms": paused,
        }
    return {
        "instance": row.instance_id,
        "timer": row.timer_id,
        "event": row.event,
        "generation": row.generation,
        "due_ms": row.due_ms,
        "in_ms": row.due_ms - now_ms if isinstance(row.due_ms, int) else None,
    }


def paused_ms(row: TimerRow) -> int | None:
    """The time a paused timer's row says it has left (None: running, or a record that
    does not say: `verify` reports such a row)."""
    record = row.record
    if record is None or '"paused_ms":' not in record:
        return None
    try:
        value = json.loads(record).get("paused_ms")
    except (ValueError, AttributeError):
        return None
    return value if value.__class__ is int else None

"""Durable timers: how the runner stores the engine's armed timers and names their events.

The engine's `State` is the truth about which timers are armed (`State.timers`,
each with the generation that armed it and its due time). The runner keeps it
in two places, both written in the transaction of the event that changed it:

- the instance row's `timers` column: the armed timers and the arming
  counter as canonical JSON (the part of `State.to_data()` the three other
  columns do not hold; None while the instance never armed a timer), so that
  loading an instance reads one row;
- `statekit_timers`: one row per armed timer with its due time (indexed), so
  that a worker finds what is due without reading every instance. `timer_rows`
  says which rows a transaction deletes and inserts: the difference between
  the armed timers before and after it. Nothing else creates or removes them.

Event IDs the runner gives (under the reserved `statekit.` prefix, so no
caller's ID can collide): a timer delivery is `statekit.timer/<timer id>/<generation>`
(`timer_event_id`), the same for every worker and every retry, so a second
firing is a duplicate of the first; an undelayed `send` becomes the event
`statekit.send/<root>/<n>` (`sent_event_id`): the n-th event sent, in the
order of the external queue, after the external event (or timer delivery,
or creation) `<root>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from statekit.compiler.serialize import canonical_json, canonical_string
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.store.rows import STORED_INT_MAX, STORED_INT_MIN, TimerRow, positional

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


def timers_text(state: State, before: State | None = None, text: str | None = None) -> str | None:
    """The instance row's `timers` column for `state` (None: it never armed a timer): the
    `timers` and `timer_generation` of `State.to_data()`, built from the timers alone.
    `before` and its column's `text`, when the caller knows them (the transaction's
    previous state, the text it built for it): a state holding the same timers (most
    events of a timed chart move none) has that text, and it is not encoded again."""
    generation = state.timer_generation
    if not generation:
        return None
    armed = state.timers
    if before is not None and before.timers is armed and before.timer_generation == generation:
        return text
    # written out instead of `canonical_json({"timer_generation": …, "timers": [t.to_data()
    # …]})`, which builds two dictionaries per timer and costs twice as much: once per
    # event that arms or cancels a timer (the same text: tests/runner/test_timer_texts.py)
    timers = ",".join([armed_text(t) for t in armed])
    return f'{{"timer_generation":{generation},"timers":[{timers}]}}'


def armed_text(timer: ArmedTimer) -> str:
    """`canonical_json(timer.to_data())`: the keys in sorted order, the strings and the
    payload in canonical JSON (an `after` timer's event is its ID: encoded once)."""
    delay, due, owner, timer_id, payload = (
        timer.delay_ms, timer.due_ms, timer.owner, timer.id, timer.payload,
    )  # fmt: skip
    head = canonical_string(timer_id)
    event = head if timer.event == timer_id else canonical_string(timer.event)
    return (
        f'{{"delay_ms":{"null" if delay is None else delay},'
        f'"due_ms":{"null" if due is None else due},'
        f'"event":{event},"generation":{timer.generation},"id":{head},'
        f'"owner":{"null" if owner is None else canonical_string(owner)},'
        f'"payload":{payload_text(payload) if payload else "{}"}}}'
    )


def payload_text(payload: Mapping[str, Any]) -> str:
    """A timer's payload in canonical JSON (the empty one, an `after` timer's, without
    encoding it: a third of what writing a timer row cost)."""
    return canonical_json(dict(payload)) if payload else "{}"


def timer_row(instance_id: str, timer: ArmedTimer, sequence: int) -> TimerRow:
    """The stored row of an armed timer (armed by the event at `sequence`, 0: creation); its
    due time within the stored integers' range (a later one never comes; an earlier one is
    long past), the largest one for a timer armed without a clock (it never comes)."""
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
    )


_timer_row = positional(
    TimerRow, "instance_id", "timer_id", "generation", "event", "payload", "due_ms", "sequence"
)


class TimerChanges(NamedTuple):
    """The timer rows one transaction removes (as `(instance ID, timer ID)`) and adds (a
    named tuple, the cheapest record to build: once per timed event)."""

    deleted: tuple[tuple[str, str], ...]
    inserted: tuple[TimerRow, ...]


NO_CHANGES = TimerChanges(deleted=(), inserted=())
_changes = tuple.__new__  # `_changes(TimerChanges, (deleted, inserted))`: without the
# named tuple's own `__new__` frame (once per timed event)


def timer_rows(
    instance_id: str, before: State, after: State, armed_at: Mapping[tuple[str, int], int]
) -> TimerChanges:
    """The rows that take the store from `before`'s armed timers to `after`'s: a timer
    not armed after is deleted; one armed after and not before, or armed again (another
    generation: it replaces its row, `Store.insert_timers` writes it over), is
    inserted, with the sequence `armed_at` gives its (ID, generation)."""
    old_armed, new_armed = before.timers, after.timers
    if old_armed is new_armed:
        return NO_CHANGES
    if len(old_armed) == 1 == len(new_armed) and old_armed[0].id == new_armed[0].id:
        # one timer before and after (a lease, a state re-entered): the general case's
        # dictionaries, sets and lists were half of what a timed event spent here
        timer = new_armed[0]
        if old_armed[0].generation == timer.generation:
            return NO_CHANGES
        sequence = armed_at.get((timer.id, timer.generation), 0)
        return _changes(TimerChanges, ((), (timer_row(instance_id, timer, sequence),)))
    # a timer is its (ID, generation): the arming counter never repeats a generation, so
    # equal pairs are the same arming, whatever else the records hold
    old = {t.id: t.generation for t in old_armed}
    if old:
        new_ids = {t.id for t in new_armed}
        deleted = tuple([(instance_id, i) for i in old if i not in new_ids])
    else:
        deleted = ()
    inserted = tuple(
        [
            timer_row(instance_id, t, armed_at.get((t.id, t.generation), 0))
            for t in new_armed
            if old.get(t.id) != t.generation
        ]
    )
    if not deleted and not inserted:
        return NO_CHANGES
    return _changes(TimerChanges, (deleted, inserted))


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
    if timer.due_ms is None:
        return "the instance's timer has no due time (it was armed without a clock)"
    return None


def row_data(row: TimerRow, now_ms: int) -> dict[str, Any]:
    """The JSON-ready form `statekit timers` lists: instance, timer, event, generation,
    due time (epoch ms and ISO 8601 UTC) and how long until it is due (negative: overdue)."""
    return {
        "instance": row.instance_id,
        "timer": row.timer_id,
        "event": row.event,
        "generation": row.generation,
        "due_ms": row.due_ms,
        "in_ms": row.due_ms - now_ms if isinstance(row.due_ms, int) else None,
    }

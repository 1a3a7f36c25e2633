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
from dataclasses import dataclass
from typing import Any

from statekit.compiler.serialize import canonical_json
from statekit.engine.records import maker
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.store.rows import STORED_INT_MAX, STORED_INT_MIN, TimerRow

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


def stored_due(timer: ArmedTimer) -> int | None:
    """The due time a row stores for `timer`: its due time within the stored integers'
    range (a later one never comes; an earlier one is long past), None when the
    timer has none (armed without a clock)."""
    if timer.due_ms is None:
        return None
    return min(max(timer.due_ms, STORED_INT_MIN), STORED_INT_MAX)


def timers_text(state: State) -> str | None:
    """The instance row's `timers` column for `state` (None: it never armed a timer): the
    `timers` and `timer_generation` of `State.to_data()`, built from the timers alone."""
    generation = state.timer_generation
    if not generation:
        return None
    armed = state.timers
    last = _last_text
    if last[0] is armed and last[1] == generation:
        return last[2]
    text = canonical_json({"timer_generation": generation, "timers": [t.to_data() for t in armed]})
    _remember((armed, generation, text))
    return text


# The last text `timers_text` built, with the timers tuple it was built from (held here,
# so its identity cannot be taken by another) and the generation, as one tuple replaced
# whole: an event that moves neither (most events of a timed chart) gets the text back
# without encoding every armed timer again.
_last_text: tuple[tuple[ArmedTimer, ...] | None, int, str] = (None, 0, "")


def _remember(value: tuple[tuple[ArmedTimer, ...] | None, int, str]) -> None:
    global _last_text
    _last_text = value


def timer_row(instance_id: str, timer: ArmedTimer, sequence: int) -> TimerRow:
    """The stored row of an armed timer (armed by the event at `sequence`, 0: creation)."""
    due = stored_due(timer)
    # TimerRow(instance_id=, timer_id=, generation=, event=, payload=, due_ms=, sequence=),
    # its slots set directly (`records.maker`): one per timer armed, on a timed event.
    return _timer_row(
        instance_id,
        timer.id,
        timer.generation,
        timer.event,
        canonical_json(dict(timer.payload)),
        STORED_INT_MAX if due is None else due,
        sequence,
    )


_timer_row = maker(TimerRow)


@dataclass(frozen=True, slots=True)
class TimerChanges:
    """The timer rows one transaction removes (by timer ID) and adds."""

    deleted: tuple[str, ...]
    inserted: tuple[TimerRow, ...]


NO_CHANGES = TimerChanges(deleted=(), inserted=())
_timer_changes = maker(TimerChanges)


def timer_rows(
    instance_id: str, before: State, after: State, armed_at: Mapping[tuple[str, int], int]
) -> TimerChanges:
    """The rows that take the store from `before`'s armed timers to `after`'s: a timer
    not armed after is deleted; one armed after and not before, or armed again (another
    generation: it replaces its row, `Store.insert_timers` writes it over), is
    inserted, with the sequence `armed_at` gives its (ID, generation)."""
    if before.timers == after.timers:
        return NO_CHANGES
    old = {t.id: t.generation for t in before.timers}
    new = {t.id: t for t in after.timers}
    deleted = tuple(i for i in old if i not in new)
    inserted = tuple(
        timer_row(instance_id, t, armed_at.get((t.id, t.generation), 0))
        for t in after.timers
        if old.get(t.id) != t.generation
    )
    return _timer_changes(deleted, inserted)  # TimerChanges(deleted=, inserted=)


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

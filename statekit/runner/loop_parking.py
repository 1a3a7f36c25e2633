"""Parking an eventless timer loop durably: the timer consumed and recorded as `TIMER_LOOP`.

`statekit worker` bounds how often it delivers an instance's timers that arm a timer due
at once again (`after: {0ms: self}`, two states handing over with 0 ms timers, an `at:`
already past re-armed on entry): past the bound it parks the timers the last delivery
armed. Parking is the mechanism a poison delivery (`KEY_TOO_LONG`) goes through: in the
instance's own transaction the timer is consumed without its event and recorded as a
rejected delivery (status `REJECTED`, the next sequence, reason `TIMER_LOOP` and
`PARKED_MESSAGE` in its evidence, the timer row deleted; nothing else changes), so no
worker, restarted or other, delivers it again, and the history says why.

The replay (`runner.history`) consumes it the same way when the row records that reason
and the timer was armed with that generation and due by the row's clock reading (a loop
timer is due at once), so `verify` agrees; a row claiming a parked timer that was not
armed, or not due, is reported. The worker's bound is not replayed: a parked loop is a
decision the history records, as a rejection by the chart is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statekit.engine.chart import Chart
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.evidence import EvidenceFormError, evidence_data
from statekit.runner.outcome import KEY_TOO_LONG, TIMER_LOOP, Outcome, OutcomeStatus
from statekit.runner.store.base import Store
from statekit.runner.store.parked_queries import last_rejected_deliveries
from statekit.runner.timers import TIMER_PREFIX, parse_timer_event_id

if TYPE_CHECKING:  # (the write stages decide with `TimerDelivery`, which imports this)
    pass

PARKED_MESSAGE = (
    "its deliveries kept arming a timer due at once (an eventless loop; the worker's bound "
    "is MAX_REDELIVERIES_AT_ONCE): parked, the timer is consumed"
)
"""The message of a `TIMER_LOOP` rejection, after the timer's ID (the same at every
bound, so that the replay gives it back)."""


def parked_message(timer_id: str) -> str:
    """The message recorded when the timer `timer_id` is parked."""
    return f"timer {timer_id!r}: {PARKED_MESSAGE}"


def consume_parked(chart: Chart, state: State, timer: ArmedTimer, event_id: str) -> Result:
    """The parking of the armed `timer`: consumed without its event, REJECTED as
    `TIMER_LOOP`; what `park_timer` records and the replay gives."""
    return chart.consume(
        state,
        timer.id,
        generation=timer.generation,
        reason=TIMER_LOOP,
        message=parked_message(timer.id),
        event_id=event_id,
    )


def _rejection(evidence: str, event_id: str) -> dict[str, Any] | None:
    """The `rejected` object of a stored evidence text (None: none, or a damaged text)."""
    try:
        data = evidence_data(json.loads(evidence), event_id)
    except (ValueError, EvidenceFormError):
        return None
    rejected = data.get("rejected")
    return rejected if isinstance(rejected, dict) else None


def records_parking(evidence: str, event_id: str) -> bool:
    """Whether a stored rejected delivery's `evidence` records a parked loop (reason
    `TIMER_LOOP`); False for any other text, a damaged one included (the replay then
    reports the row as it would without this check)."""
    rejected = _rejection(evidence, event_id)
    return rejected is not None and rejected.get("reason") == TIMER_LOOP


def replays_parking(timer: ArmedTimer, generation: int, clock_ms: int | None) -> bool:
    """Whether a parked loop of the timer armed at `generation` may be replayed on `timer`
    (the timer of that ID the state has armed): armed at that generation and due by the
    row's clock reading `clock_ms`."""
    if timer.generation != generation or clock_ms is None:
        return False
    return timer.due_ms is not None and timer.due_ms <= clock_ms


def is_parked(outcome: Outcome) -> bool:
    """Whether `outcome` is a parking that was recorded."""
    return outcome.status is OutcomeStatus.REJECTED and outcome.reason == TIMER_LOOP


PARKED_REASONS = frozenset({TIMER_LOOP, KEY_TOO_LONG})
"""The reasons a timer is consumed for that will not change: a loop the worker parked, a
delivery whose key is over the identifier bound (a poison delivery)."""


@dataclass(frozen=True, slots=True)
class ParkedTimer:
    """A timer consumed for one of `PARKED_REASONS` by its instance's last history entry
    (at `sequence`): what `statekit timers` lists after the armed timers."""

    instance_id: str
    timer_id: str
    generation: int
    event: str
    sequence: int
    reason: str
    message: str

    def to_data(self) -> dict[str, Any]:
        """The JSON-ready form `statekit timers --format json` lists."""
        return {
            "instance": self.instance_id,
            "timer": self.timer_id,
            "event": self.event,
            "generation": self.generation,
            "parked": self.reason,
            "message": self.message,
            "sequence": self.sequence,
        }


def parked_timers(store: Store) -> list[ParkedTimer]:
    """The timers parked by the last history entry of their instance (inside the caller's
    transaction; see `store.parked_queries`), by instance ID. An instance that took an
    event since is not listed: its history keeps the entry."""
    parked = []
    for row in last_rejected_deliveries(store, TIMER_PREFIX):
        timer = parse_timer_event_id(row.event_id)
        rejected = _rejection(row.evidence, row.event_id)
        if timer is None or rejected is None or rejected.get("reason") not in PARKED_REASONS:
            continue
        reason, message = str(rejected["reason"]), str(rejected.get("message"))
        parked.append(
            ParkedTimer(
                row.instance_id, timer[0], timer[1], row.type, row.sequence, reason, message
            )
        )
    return parked

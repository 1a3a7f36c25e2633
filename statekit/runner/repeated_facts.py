"""An event that repeats a fact the history holds: how it is classified and worded.

A chart's `idempotency:` key (`runner.keys`) names the fact an event reports.
When an earlier accepted event of the instance (the *holder*) holds the key a
new event gives, the new event is not applied again: with the holder's payload
hash it is a duplicate (audited as `DUPLICATE_FACT`, the outcome
`ALREADY_APPLIED`), with another payload a `BUSINESS_KEY_CONFLICT`. Three
places decide it and take their reason, wording and conflict record from here:
`InstanceTransaction.decide` for an event, `InstanceTransaction.fire` for a
timer delivery the chart accepts (the timer is consumed: `consume_delivery`),
and the replay of such a delivery (`runner.history`).
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.engine.chart import Chart
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.outcome import BUSINESS_KEY_CONFLICT, DUPLICATE_FACT, Conflict


@dataclass(frozen=True, slots=True)
class RepeatedFact:
    """A new event of `type` whose idempotency `key` the event `event_id` holds, recorded
    at `sequence`; `same`: with the same payload hash as the new event."""

    type: str
    key: str | None
    event_id: str
    sequence: int
    same: bool

    @property
    def reason(self) -> str:
        """`DUPLICATE_FACT` for the same payload, else `BUSINESS_KEY_CONFLICT`."""
        return DUPLICATE_FACT if self.same else BUSINESS_KEY_CONFLICT

    def message(self, *, timer: bool = False) -> str:
        """The repeat in words, naming the holder and its sequence; `timer`: for a timer
        delivery, which the repeat consumed."""
        said = (
            f"this {self.type} (key {self.key}) was recorded by event {self.event_id!r} at "
            f"sequence {self.sequence}"
        )
        if not self.same:
            said += " with another payload"
        if timer:
            return f"{said}; the timer is consumed"
        return said if self.same else f"{said}; nothing applied"

    def conflict(self, expected_version: int | None, version: int) -> Conflict:
        """The repeat as the conflict record audits and outcomes carry (`version`: the
        instance's version when it was decided)."""
        return Conflict(
            reason=self.reason,
            expected_version=expected_version,
            version=version,
            event_id=self.event_id,
            sequence=self.sequence,
        )


def consume_delivery(
    chart: Chart, state: State, timer: ArmedTimer, fact: RepeatedFact, event_id: str
) -> Result:
    """The delivery of the armed `timer` (event ID `event_id`) whose event repeats `fact`:
    the timer consumed without its event (`Chart.consume`), REJECTED with the fact's
    reason and message; what `InstanceTransaction.fire` records and the replay gives."""
    return chart.consume(
        state,
        timer.id,
        generation=timer.generation,
        reason=fact.reason,
        message=fact.message(timer=True),
        event_id=event_id,
    )

"""What `Runner.apply` returns: the engine's classification plus the runner's own.

`APPLIED`, `ALREADY_APPLIED` and `REJECTED` mean what they mean for the engine
(docs/semantics.md); the runner adds `CONFLICT` with one of five reasons:

- `EVENT_ID_PAYLOAD_CONFLICT`: the event ID is recorded with another payload
  (or type); nothing applied, the attempt is audited for investigation;
- `VERSION_CONFLICT`: `expected_version` is not the instance's version; the
  caller must re-read and re-decide (the runner never retries on its own);
- `SEQUENCE_GAP`: a producer sequence beyond version + 1; `missing` names the
  range that must arrive first; nothing applied;
- `DUPLICATE_OR_OLD_SEQUENCE`: the sequence is taken by another event ID, a
  history conflict (audited);
- `BUSINESS_KEY_CONFLICT`: another event ID already recorded the same fact (the
  chart's `idempotency:` key) with another payload; nothing applied, audited.

A new event ID whose idempotency key is taken with the same payload is
`ALREADY_APPLIED` with `duplicate` true, like a redelivered event ID;
`sequence` and `first_event_id` name the event that recorded the fact; it is
audited (reason `DUPLICATE_FACT`), a sender re-sending facts being worth a look.
`fire_due` reports a timer delivery whose event repeats a recorded fact the same
way (ALREADY_APPLIED or CONFLICT `BUSINESS_KEY_CONFLICT`, not audited): the
delivery consumed its timer and is in the history, so `version` is past it.

Every outcome reports the instance's current version.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from statekit.engine.result import EmittedMessage, Result
from statekit.engine.state import State

EVENT_ID_PAYLOAD_CONFLICT = "EVENT_ID_PAYLOAD_CONFLICT"
"""The event ID was recorded with a different payload hash."""
VERSION_CONFLICT = "VERSION_CONFLICT"
"""`expected_version` is stale (or from the future)."""
SEQUENCE_GAP = "SEQUENCE_GAP"
"""The producer sequence is beyond version + 1: earlier events are missing."""
DUPLICATE_OR_OLD_SEQUENCE = "DUPLICATE_OR_OLD_SEQUENCE"
"""The producer sequence is already taken by another event ID."""
BUSINESS_KEY_CONFLICT = "BUSINESS_KEY_CONFLICT"
"""The event's idempotency key is recorded by another event ID with another payload."""
DUPLICATE_FACT = "DUPLICATE_FACT"
"""The reason of the audit row of an `ALREADY_APPLIED` duplicate by idempotency key (the
outcome itself has no reason, as every duplicate)."""

KEY_TOO_LONG = "KEY_TOO_LONG"
"""The event's encoded idempotency key is over the identifier bound
(`identifier_bounds.MAX_ID_BYTES`): refused before the store sees it."""

TIMER_LOOP = "TIMER_LOOP"
"""A timer parked by the worker's loop guard (`runner.loop_parking`): its deliveries kept
arming a timer due at once; it is consumed without its event."""

RUNNER_REASONS = frozenset(
    {
        KEY_TOO_LONG,
        TIMER_LOOP,
        EVENT_ID_PAYLOAD_CONFLICT,
        VERSION_CONFLICT,
        SEQUENCE_GAP,
        DUPLICATE_OR_OLD_SEQUENCE,
        BUSINESS_KEY_CONFLICT,
    }
)
"""The reason codes the runner adds to the engine's."""


class OutcomeStatus(enum.Enum):
    """The classification of one `apply` call."""

    APPLIED = "APPLIED"
    ALREADY_APPLIED = "ALREADY_APPLIED"
    REJECTED = "REJECTED"
    CONFLICT = "CONFLICT"


@dataclass(frozen=True, slots=True)
class Conflict:
    """Why a command did not fit the stored history, as data.

    `expected_version` is what the caller (or its sequence) assumed, `version`
    the instance's version at the time, `event_id` the event in the way (the
    winner of a race, the holder of a sequence, or the recorded event of a
    reused ID), `sequence` where that event sits.
    """

    reason: str
    expected_version: int | None
    version: int
    event_id: str | None = None
    sequence: int | None = None

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (stored in evidence and audit rows)."""
        return {
            "reason": self.reason,
            "expected_version": self.expected_version,
            "version": self.version,
            "event_id": self.event_id,
            "sequence": self.sequence,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of `Runner.apply`.

    `version` is the instance's current version after the call; `sequence` the
    event's place in the history (its version) when it is recorded there,
    including a duplicate's original place; `result` the engine's result when
    the chart was consulted (None for duplicates and conflicts). `conflict`
    details a CONFLICT; `race` the earlier conflict this command was re-decided
    after (`after_conflict`); `missing` the (first, last) sequences of a gap;
    `instance_id` the instance when the caller did not name it (`fire_due`);
    `sent` the outcomes of the undelayed sends the event made, in order, applied
    right after it in the same transaction.
    """

    status: OutcomeStatus
    reason: str | None
    version: int
    state: State
    event_id: str
    result: Result | None = None
    sequence: int | None = None
    duplicate: bool = False
    message: str | None = None
    conflict: Conflict | None = None
    race: Conflict | None = None
    missing: tuple[int, int] | None = None
    emitted: tuple[EmittedMessage, ...] = field(default=())
    first_event_id: str | None = None
    instance_id: str | None = None
    sent: tuple[Outcome, ...] = ()

    @property
    def applied(self) -> bool:
        """Whether this call recorded the event as APPLIED."""
        return self.status is OutcomeStatus.APPLIED

    def to_data(self, instance_id: str | None = None) -> dict[str, Any]:
        """The JSON line `statekit run` writes for this outcome."""
        data: dict[str, Any] = {}
        instance_id = self.instance_id if instance_id is None else instance_id
        if instance_id is not None:
            data["instance"] = instance_id
        data.update(
            event_id=self.event_id,
            status=self.status.value,
            reason=self.reason,
            version=self.version,
        )
        if self.sequence is not None:
            data["sequence"] = self.sequence
        if self.duplicate:
            data["duplicate"] = True
        if self.first_event_id is not None:
            data["first_event_id"] = self.first_event_id
        if self.message:
            data["message"] = self.message
        if self.missing is not None:
            data["missing"] = list(self.missing)
        if self.conflict is not None:
            data["conflict"] = self.conflict.to_data()
        if self.race is not None:
            data["race"] = self.race.to_data()
        data["state"] = list(self.state.leaves)
        if self.emitted:
            data["emitted"] = [m.message_id for m in self.emitted]
        if self.sent:
            data["sent"] = [
                {k: v for k, v in o.to_data().items() if k not in ("instance", "state")}
                for o in self.sent
            ]
        return data

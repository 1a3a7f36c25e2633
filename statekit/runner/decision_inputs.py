"""What a decision is asked and what it is told: a `Command` (one event to apply, with
the caller's expectations) and the `HistoryFacts` the stored history gives about it,
read before it is decided (`LookedUp`: a batch's event IDs, looked up together).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statekit.runner.outcome import Conflict
from statekit.runner.store.rows import RecordedId, RecordedKey


@dataclass(frozen=True, slots=True)
class Command:
    """One event to apply, with the caller's expectations (see `Runner.apply`)."""

    event_id: str
    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    expected_version: int | None = None
    sequence: int | None = None
    after_conflict: Conflict | None = None


@dataclass(frozen=True, slots=True)
class HistoryFacts:
    """What the stored history says about one command, read before it is decided:
    where its event ID is recorded (None: nowhere), and the event ID recorded at
    the sequence `InstanceTransaction.sequence_to_look_up` names (None: none there,
    or no sequence named), and the accepted event holding the command's idempotency
    key (None: none, or the event declares no key)."""

    recorded: RecordedId | None = None
    event_id_at_sequence: str | None = None
    key_holder: RecordedKey | None = None


@dataclass(frozen=True, slots=True)
class LookedUp:
    """Where the event IDs of a batch are recorded, looked up together before it is decided
    (inside its transaction): `asked` the (instance ID, event ID) pairs looked up, `found`
    those recorded. A pair not asked is looked up on its own."""

    asked: frozenset[tuple[str, str]]
    found: Mapping[tuple[str, str], RecordedId]


NOTHING_RECORDED = HistoryFacts()
"""The facts of a command whose event ID is not recorded and that names no sequence."""

"""Evidence records: what a step shows of the microsteps it took, as frozen data.

One `Microstep` per SCXML microstep lists the transitions fired
(`FiredTransition`), the states exited and entered, the context changes
(`ContextChange`), the ids of the messages emitted (`EmittedMessage`), the
internal events raised and, only when there are any, the timers armed and
cancelled and the events sent. Secret values appear as `REDACTED`.
"""

# No `from __future__ import annotations`: the named tuples' fields keep their types as
# written (with it, `help()` shows them as `ForwardRef`s).

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["REDACTED", "ContextChange", "EmittedMessage", "FiredTransition", "Microstep"]

REDACTED = "<redacted>"
"""What evidence and `repr` show instead of a secret value."""


@dataclass(frozen=True, slots=True)
class FiredTransition:
    """A transition as evidence: its id in `chart.ir.transitions`, where it goes and why.

    `kind` is `event`, `always` or `done`; `targets` is empty for a targetless transition.
    """

    id: int
    source: str
    targets: tuple[str, ...]
    event: str | None
    kind: str


class ContextChange(NamedTuple):
    """One `assign` of a context field, in the order the effects ran.

    A named tuple, as `Microstep` is: see `Microstep` for why."""

    field: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class EmittedMessage:
    """An outbox message: never sent by the engine, only returned.

    `message_id` is `<event id>/<position>` (position 0-based in `Result.emitted`),
    so redelivering the same event produces the same ids.
    """

    message_id: str
    type: str
    payload: Mapping[str, Any]


class Microstep(NamedTuple):
    """One SCXML microstep: the triggering event, what fired and what it changed.

    `event` is the external or internal event (`done.state.<path>` for a done
    event), None for eventless (`always`) transitions. `exited` is in exit
    order, `entered` in entry order, both as dotted paths. `emitted` holds the
    ids of the messages this microstep emitted (see `Result.emitted`). `armed`
    and `cancelled` are the ids of the timers it armed and cancelled, `sent`
    the events of its undelayed `send`s, in the order its effects ran (empty for
    a chart without time).

    `Microstep` and `ContextChange` are named tuples, frozen like the other records but
    built by one C call (`tuple.__new__`) where the engine makes one per event: the
    general path's evidence (`statekit.engine.compiled_evidence`) made as two slotted
    records cost about a third of a guarded event with its evidence read
    (bench/xstate_peer.py). Their fields are read by name; as tuples they also unpack
    and compare equal to a tuple of the same values.
    """

    event: str | None
    payload: Mapping[str, Any]
    transitions: tuple[FiredTransition, ...]
    exited: tuple[str, ...]
    entered: tuple[str, ...]
    changes: tuple[ContextChange, ...]
    emitted: tuple[str, ...]
    raised: tuple[str, ...]
    armed: tuple[str, ...] = ()
    cancelled: tuple[str, ...] = ()
    sent: tuple[str, ...] = ()

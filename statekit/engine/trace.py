"""The trace of a macrostep: one immutable `AppliedMicrostep` per microstep it applied.

The step builds its evidence from the trace; a `LivelockError` carries the
trace of the microsteps taken before the bound.

Both records are named tuples, not frozen dataclasses, because one of each
is built per microstep and per assignment on the engine's hot path: in
Python 3.11 a frozen dataclass costs about four times as much to construct
(it sets every field through `object.__setattr__`), which took a third of the
task chart's throughput.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from statekit.engine.evidence import ContextChange
from statekit.engine.tables import MicrostepPlan

InternalEvent = tuple[str, Mapping[str, Any]]
"""An event as the algorithm sees it: its name and its (validated) payload."""


AssignedValue = ContextChange
"""One field an `assign` changed, with the value before and after, as the trace holds it
(unredacted): the evidence's own record (`ContextChange`), so that a microstep without a
secret field shows the trace's records as they are."""


class AppliedMicrostep(NamedTuple):
    """One microstep a macrostep applied: the event that triggered it (None for an
    eventless one), its plan, the context fields its effects assigned, the slice
    `[emitted_start, emitted_end)` of the run's outbox it emitted, and the
    internal events it raised."""

    event: InternalEvent | None
    plan: MicrostepPlan
    changes: tuple[AssignedValue, ...]
    emitted_start: int
    emitted_end: int
    raised: tuple[str, ...]

    @property
    def exited(self) -> tuple[str, ...]:
        """The paths of the states it exited, in exit order (its plan's)."""
        return self.plan.exited

    @property
    def entered(self) -> tuple[str, ...]:
        """The paths of the states it entered, in entry order (its plan's)."""
        return self.plan.entered

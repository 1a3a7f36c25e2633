"""The trace of a macrostep: one frozen `AppliedMicrostep` per microstep it applied.

The step builds its evidence from the trace; a `LivelockError` carries the
trace of the microsteps taken before the bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statekit.engine.evidence import ContextChange
from statekit.engine.tables import MicrostepPlan

InternalEvent = tuple[str, Mapping[str, Any]]
"""An event as the algorithm sees it: its name and its (validated) payload."""


@dataclass(frozen=True, slots=True)
class AppliedMicrostep:
    """One microstep a macrostep applied: the event that triggered it (None for an
    eventless one), its plan, the context changes of its effects, the slice
    `[emitted_start, emitted_end)` of the run's outbox it emitted, and the
    internal events it raised."""

    event: InternalEvent | None
    plan: MicrostepPlan
    changes: tuple[ContextChange, ...]
    emitted_start: int
    emitted_end: int
    raised: tuple[str, ...]

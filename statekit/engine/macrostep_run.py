"""The accumulator of one macrostep.

`MacrostepRun` is what the SCXML procedures in `statekit.engine.algorithm`
write while a macrostep runs: the configuration, the context and history
(copied on the first write), the trace of applied microsteps, the outbox
and the internal queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.ir import GuardCheck, Transition
from statekit.engine.tables import Configuration, TransitionConflict
from statekit.engine.trace import AppliedMicrostep, InternalEvent
from statekit.engine.value_domain import CONCRETE, ValueDomain

FailedGuard = tuple[GuardCheck, Transition]
"""The first guard that failed during a selection, and its transition."""


class MacrostepRun:
    """The accumulator and, at the end, the outcome of one macrostep.

    `fired` tells whether the triggering event selected any transition;
    when it did not, `failed_guard` holds the first guard that failed during
    selection. `context` and `history` are the input mappings themselves
    until an effect or an exit writes to them. `values` is the value domain
    effects compute in (`CONCRETE`, or `ABSTRACT` for the static analysis);
    `conflicts`, when a list, collects the conflict resolutions that removed a
    transition.
    """

    __slots__ = (
        "configuration",
        "conflicts",
        "context",
        "context_owned",
        "emitted",
        "failed_guard",
        "fired",
        "history",
        "history_owned",
        "queue",
        "raised",
        "trace",
        "values",
    )

    def __init__(
        self,
        configuration: Configuration,
        context: Mapping[str, Any],
        history: Mapping[int, tuple[int, ...]],
        values: ValueDomain = CONCRETE,
        conflicts: list[TransitionConflict] | None = None,
    ) -> None:
        self.configuration = configuration
        self.context: Mapping[str, Any] = context
        self.context_owned = False
        self.history: Mapping[int, tuple[int, ...]] = history
        self.history_owned = False
        self.trace: list[AppliedMicrostep] = []
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self.raised: list[str] = []
        self.queue: list[InternalEvent] = []
        self.fired = False
        self.failed_guard: FailedGuard | None = None
        self.values = values
        self.conflicts = conflicts

"""The accumulator of one macrostep.

`MacrostepRun` is what the SCXML procedures in `statekit.engine.algorithm`
write while a macrostep runs: the configuration, the context and history
(copied on the first write), the trace of applied microsteps, the outbox,
the internal queue and, once a timer effect runs, its timers (`TimerRun`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from statekit.compiler.ir import GuardCheck, Transition
from statekit.engine.tables import Configuration, TransitionConflict
from statekit.engine.timers import NO_TIMERS, TimerRun, Timers
from statekit.engine.trace import AppliedMicrostep, InternalEvent
from statekit.engine.value_domain import CONCRETE, ValueDomain

ConditionOracle = Callable[
    [GuardCheck, Transition | None, Mapping[str, Any], Mapping[str, Any], frozenset[int]], bool
]
"""The analysis's decider of data conditions (`selection.GuardOracle`), consulted for the
condition of an `if` effect too; None in the engine's own runs (conditions are evaluated)."""

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
    transition. `timers` are the input state's timers and `now_ms` the clock's
    reading given to the step; `timing` is None until a timer effect runs
    (`statekit.engine.timers`), so a macrostep without one pays nothing for time.
    `oracle`, set by the static analysis, decides the conditions of `if` effects.
    `bound` is the payload of the event the macrostep last took up (see `__init__`).
    `errors` is a list in a chart with `on_evaluation_error: raise`: the messages of
    evaluation errors not yet queued as `error.execution` events; None otherwise (an
    evaluation error then raises `EvaluationError`).
    """

    __slots__ = (
        "bound",
        "configuration",
        "conflicts",
        "context",
        "context_owned",
        "emitted",
        "errors",
        "failed_guard",
        "fired",
        "history",
        "history_owned",
        "now_ms",
        "oracle",
        "queue",
        "raised",
        "timers",
        "timing",
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
        timers: Timers = NO_TIMERS,
        now_ms: int | None = None,
        oracle: ConditionOracle | None = None,
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
        self.timers = timers
        self.now_ms = now_ms
        self.timing: TimerRun | None = None
        self.oracle = oracle
        self.errors: list[str] | None = None
        self.bound: Mapping[str, Any] = {}
        """The payload of the event `_event` is bound to (the last one the macrostep took
        up: the external event, then each internal one), what eventless microsteps'
        guards and effects see; empty before any (the start)."""

    def final_timers(self) -> Timers:
        """The timers at the end of the macrostep (the input's when it touched none)."""
        return self.timers if self.timing is None else self.timing.timers()

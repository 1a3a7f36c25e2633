"""Abstract execution: the engine's macrosteps for the static analysis, as frozen records.

The analysis runs the chart as written, with the engine's own selection,
exit and entry sets and internal events, but without data: its context is
unknown. Through this module (its only door into the engine) it

- runs a macrostep with every guard decided by a `GuardOracle` it passes and
  with no effect expression evaluated (`value_domain.ABSTRACT`: an assigned
  field gets a new `AbstractValue`, nothing is emitted, a raised event
  carries only its payload defaults; the analysis may pass a subclass of
  `AbstractDomain` that stores some fields' values exactly): `abstract_macrostep`,
  `abstract_initial_macrostep`; each returns an `AbstractMacrostep`;
- asks what a macrostep does when no data can matter (`data_free_macrostep`,
  the engine's memo) and how an event that selected nothing is classified
  (`classify_unselected`, as the step classifies it).

Every record lists the conflict resolutions that removed a transition on the
way (`tables.TransitionConflict`, with the states both transitions would exit and
whether only document order decided).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statekit.engine.algorithm import initial_macrostep, macrostep
from statekit.engine.errors import LivelockError
from statekit.engine.macrostep_run import FailedGuard, MacrostepRun
from statekit.engine.memo import abstract_memoised_macrostep
from statekit.engine.selection import GuardOracle
from statekit.engine.tables import (
    Configuration,
    MemoisedMacrostep,
    MicrostepPlan,
    Tables,
    TransitionConflict,
)
from statekit.engine.trace import AppliedMicrostep
from statekit.engine.transition_sets import History
from statekit.engine.unselected import Basis, classify_unselected
from statekit.engine.value_domain import ABSTRACT, AbstractDomain, AbstractValue, ValueDomain

__all__ = [
    "ABSTRACT",
    "AbstractDomain",
    "AbstractMacrostep",
    "AbstractValue",
    "Basis",
    "ValueDomain",
    "abstract_initial_macrostep",
    "abstract_macrostep",
    "classify_unselected",
    "data_free_macrostep",
]


@dataclass(frozen=True, slots=True)
class AbstractMacrostep:
    """One abstract macrostep under the oracle's guard decisions.

    `fired` tells whether the triggering event selected a transition (the
    initial macrostep always fires); when it did not, `failed_guard` is the
    first guard that failed during selection. `livelock` is True when the
    macrostep exceeded `Tables.max_microsteps` (the engine would roll it back).
    `plans` are its microsteps in order (for a livelock, those before the
    bound), `selected_for` the event name each was selected for (None:
    eventless). `target` and `history` are where it ends (the start when
    nothing fired; meaningless for a livelock). `conflicts` are the conflict
    resolutions on the way that removed a transition.
    """

    fired: bool
    failed_guard: FailedGuard | None
    livelock: bool
    plans: tuple[MicrostepPlan, ...]
    selected_for: tuple[str | None, ...]
    target: Configuration
    history: History
    conflicts: tuple[TransitionConflict, ...]


def abstract_macrostep(
    tables: Tables,
    config: Configuration,
    history: History,
    context: Mapping[str, Any],
    event: str,
    guards: GuardOracle,
    values: ValueDomain = ABSTRACT,
) -> AbstractMacrostep:
    """The macrostep of `event` (with an empty payload) from `config` and `history`,
    every guard decided by `guards` and effects computed in `values` (an abstract domain:
    by default `ABSTRACT`, no effect expression evaluated)."""
    found: list[TransitionConflict] = []
    try:
        run = macrostep(
            tables,
            config,
            history,
            context,
            (event, {}),
            oracle=guards,
            values=values,
            conflicts=found,
        )
    except LivelockError as exc:
        return _livelock(config, history, exc, found)
    return _record(run, found)


def abstract_initial_macrostep(
    tables: Tables,
    context: Mapping[str, Any],
    guards: GuardOracle,
    values: ValueDomain = ABSTRACT,
) -> AbstractMacrostep:
    """The initial macrostep (entering the initial configuration, then to completion),
    every guard decided by `guards` and effects computed in `values` (as
    `abstract_macrostep`)."""
    found: list[TransitionConflict] = []
    try:
        run = initial_macrostep(tables, context, oracle=guards, values=values, conflicts=found)
    except LivelockError as exc:
        return _livelock(tables.configuration(frozenset()), {}, exc, found)
    return _record(run, found)


def data_free_macrostep(tables: Tables, config: Configuration, event: str) -> MemoisedMacrostep:
    """What the macrostep of `event` in `config` does when no data can matter (see
    `statekit.engine.memo`; arming and cancelling `after` timers counts as data-free
    here), or `DependsOnData`."""
    return abstract_memoised_macrostep(tables, config, event)


def _selected_for(
    trace: tuple[AppliedMicrostep, ...] | list[AppliedMicrostep],
) -> tuple[str | None, ...]:
    return tuple(m.event[0] if m.event is not None else None for m in trace)


def _record(run: MacrostepRun, found: list[TransitionConflict]) -> AbstractMacrostep:
    return AbstractMacrostep(
        fired=run.fired,
        failed_guard=run.failed_guard,
        livelock=False,
        plans=tuple(m.plan for m in run.trace),
        selected_for=_selected_for(run.trace),
        target=run.configuration,
        history=run.history,
        conflicts=tuple(found),
    )


def _livelock(
    config: Configuration, history: History, exc: LivelockError, found: list[TransitionConflict]
) -> AbstractMacrostep:
    return AbstractMacrostep(
        fired=True,
        failed_guard=None,
        livelock=True,
        plans=tuple(m.plan for m in exc.trace),
        selected_for=_selected_for(exc.trace),
        target=config,
        history=history,
        conflicts=tuple(found),
    )

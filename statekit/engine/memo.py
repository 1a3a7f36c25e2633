"""The memo of data-free macrosteps: what (configuration, event) does when no data can matter.

A macrostep cannot depend on the context, the history or the payload when
every selection on the way is guard-free (`EventEntry.fixed`) and no plan
runs an effect or records history: it is then the chain of those plans up
to a configuration with no enabled eventless transition (or a final one),
the same for every instance. `memoised_macrostep` works that out once per
(configuration, event) and caches the verdict in the configuration:

- `StaticMacrostep`: the chain, and where it ends;
- `StaticLivelock`: the chain still has an enabled transition after
  `Tables.max_microsteps` plans, so `macrostep` would raise `LivelockError`
  whatever the data;
- `NoCandidates`: no active state has a transition for the event;
- `DependsOnData`: a guard, an effect or a history record is on the way;
  only the general `algorithm.macrostep` can tell.

The step uses the first three to skip the general loop; the result is the
same. Each verdict carries the conflict resolutions its selections made.
`abstract_memoised_macrostep` is the static analysis's variant: there a plan
whose only effects are the engine's arming and cancelling of `after` timers
is data-free too (the analysis computes no due times), so a chart with timers
keeps the memo's speed in the exploration.
"""

from __future__ import annotations

from statekit.engine.algorithm import plan_of
from statekit.engine.errors import LivelockError
from statekit.engine.selection import event_entry, eventless_entry
from statekit.engine.tables import (
    Configuration,
    DependsOnData,
    EventEntry,
    MemoisedMacrostep,
    MicrostepPlan,
    NoCandidates,
    StaticLivelock,
    StaticMacrostep,
    Tables,
    TransitionConflict,
)
from statekit.engine.timers import ArmTimers, CancelTimers
from statekit.engine.transition_sets import NO_HISTORY

_NO_CANDIDATES = NoCandidates()


def memoised_macrostep(tables: Tables, config: Configuration, event: str) -> MemoisedMacrostep:
    """What the macrostep of `event` in `config` does when it cannot depend on data, or
    `DependsOnData` (see the module docstring); cached per configuration."""
    found = config.cache.memo.get(event)
    if found is None:
        found = config.cache.memo[event] = _walk(tables, config, event, timers_matter=True)
    return found


def abstract_memoised_macrostep(
    tables: Tables, config: Configuration, event: str
) -> MemoisedMacrostep:
    """`memoised_macrostep` for the static analysis, where arming and cancelling `after`
    timers does not depend on data (see the module docstring); cached per configuration
    apart from the step's memo."""
    if not tables.chart.timers:
        return memoised_macrostep(tables, config, event)
    found = config.cache.abstract_memo.get(event)
    if found is None:
        found = config.cache.abstract_memo[event] = _walk(
            tables, config, event, timers_matter=False
        )
    return found


def _timers_only(plan: MicrostepPlan) -> bool:
    """Whether the plan's only effects are the engine's timer arming and cancelling."""
    return all(
        not segment.done and all(isinstance(e, ArmTimers | CancelTimers) for e in segment.effects)
        for segment in plan.segments
    )


def _walk(
    tables: Tables, config: Configuration, event: str, *, timers_matter: bool
) -> MemoisedMacrostep:
    entry = event_entry(tables, config, event)
    if entry.fixed == ():
        return _NO_CANDIDATES
    conflicts: list[TransitionConflict] = []
    plans: list[MicrostepPlan] = []
    current = config
    limit = tables.max_microsteps
    _note(entry, conflicts)
    enabled = entry.fixed
    while enabled and len(plans) < limit:
        if not tables.history_targeting.isdisjoint(enabled):
            break
        plan = plan_of(tables, current, enabled, NO_HISTORY)
        if plan.history_updates or (plan.segments and (timers_matter or not _timers_only(plan))):
            break
        plans.append(plan)
        current = plan.target
        if current.final:
            return StaticMacrostep(target=current, plans=tuple(plans), conflicts=tuple(conflicts))
        eventless = eventless_entry(tables, current)
        _note(eventless, conflicts)
        enabled = eventless.fixed
        if enabled == ():
            return StaticMacrostep(target=current, plans=tuple(plans), conflicts=tuple(conflicts))
    else:
        if enabled:  # `limit` plans taken and a fixed selection still enabled
            message = str(LivelockError(limit, ()))
            return StaticLivelock(plans=tuple(plans), message=message, conflicts=tuple(conflicts))
    return DependsOnData(conflicts=tuple(conflicts))


def _note(entry: EventEntry, conflicts: list[TransitionConflict]) -> None:
    if entry.conflict is not None:
        conflicts.append(entry.conflict)

"""The explorer: every reachable configuration of a chart, by the engine's own macrosteps.

The abstract state is a configuration plus the recorded history values and
the values of the tracked context fields (`statekit.analysis.tracked_context`:
booleans and enums every `assign` of which is exact); the rest of the context
is abstracted away. From the initial macrostep on, every
abstract state is expanded with every declared event and every timer event
armed in it (`statekit.analysis.timers`: an `after` timer while its state is
active), breadth first,
through the engine's abstract execution (`statekit.engine.abstract`: no
effect expression is evaluated) with a guard oracle: guards whose
three-valued value is known (`active()` terms, constants) are answered
exactly; a guard on unknown data (`ctx.*`, `event.*`) is a *choice*, and
the explorer enumerates every sequence of choices by replaying the
macrostep depth first (True first, then False). One macrostep thus gives
one `MacrostepBranch` per distinct result, each with the `Assumption`s its
choices made. Within one macrostep, a guard asked
again on the same data (the same values of the context fields it reads, where
an abstract `assign` stores a fresh `AbstractValue`; the same payload; the
same relevant active states) gets the same answer, so alternatives guarded by
the same condition are not treated as independent. A stable configuration
also tells something: its `always` transitions were all disabled when the
previous macrostep ended, so a data guard that alone kept one disabled starts
the next macrostep false (until an `assign` changes what it reads).

Runs are shared by every abstract state with the same configuration, the same
tracked values and the same values of the history states the runs may read (history values matter
only through transitions that target history states); their history records
are replayed onto each state's own.

An event that selects nothing is classified by the engine's own
`classify_unselected` (ALREADY_APPLIED, the failing guard's reason, a
`reject` reason, TERMINAL_STATE or UNDEFINED_TRANSITION); a final chart
selects nothing, as in the engine's step. Macrosteps that depend on no data
use the engine's memo (`data_free_macrostep`). Every abstract macrostep
returns the conflict resolutions that removed a transition; the first
sighting of each is kept as a `SeenConflict` with its macrostep.

What is kept is compact (`statekit.analysis.exploration`): integers per
abstract state and outcome, branches and steps shared by every configuration
where they are the same (`statekit.analysis.shared_outcomes`). The caches keyed
by engine configurations live in a scope (`statekit.analysis.explorer_scope`)
dropped and started afresh every `SCOPE_EXPANSIONS` expanded abstract states;
the runs of one macrostep are made by `statekit.analysis.macrostep_runs`, the
enumeration of data-guard choices by `statekit.analysis.guard_choices`.

Bounds: at most `max_configurations` abstract states, at most `MAX_CHOICES`
data-guard decisions in one macrostep (past them every further data guard is
assumed to fail), `MAX_RUNS` runs per abstract state and event, and at most
`max_memory` bytes of memory grown during the exploration: every
`MEMORY_CHECK_EVERY` expanded states the process's memory is read
(`statekit.analysis.memory`), and past the bound the search stops at once (the
states found but not expanded keep `outcomes` None). A chart whose
configurations explode (twenty parallel regions of two states: a million
configurations from 2 KB of YAML) thus ends as an incomplete exploration,
never as an out-of-memory; where it stops depends on the machine's memory
accounting, within one check interval. Past a bound the exploration is
incomplete and says so in `Exploration.limits`; it never hangs.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable

from statekit.analysis.components import RegionComponents
from statekit.analysis.exploration import EVERY, Exploration, History, HistoryKey, Limit
from statekit.analysis.explorer_scope import ExplorerScope
from statekit.analysis.macrostep_branches import BEYOND, NOWHERE, MacrostepBranch
from statekit.analysis.macrostep_runs import MacrostepRuns
from statekit.analysis.memory import memory_in_use
from statekit.analysis.selection_reads import named_events
from statekit.analysis.shared_outcomes import SharedOutcomes, assumption_key, livelock_branch
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart
from statekit.engine.abstract import (
    AbstractMacrostep,
    ValueDomain,
    abstract_initial_macrostep,
    data_free_macrostep,
)
from statekit.engine.result import Status
from statekit.engine.selection import GuardOracle
from statekit.engine.tables import (
    Configuration,
    NoCandidates,
    StaticMacrostep,
    Tables,
)

DEFAULT_MAX_CONFIGURATIONS = 100_000
"""Default bound on abstract states (configuration + history values + tracked values)."""
DEFAULT_MAX_MEMORY = 512 << 20
"""Default bound on the memory an exploration may grow the process by (bytes: 512 MiB)."""
MEMORY_CHECK_EVERY = 256
"""The process's memory is read after every this many expanded abstract states."""
SCOPE_EXPANSIONS = 2048
"""Expanded abstract states after which the engine's working tables and the caches keyed
by their configurations are dropped (see the module docstring): large enough that the
runs shared by abstract states of one configuration, and the configurations a stretch
both reaches and expands, are mostly reused; small enough that the caches stay about
16 MB."""

_new = tuple.__new__


class ComponentsMet(Exception):
    """Raised when a node reached through the events of one component is reached again
    through another's (`statekit.analysis.compositional` then builds the product)."""


Progress = Callable[[int, int], None]
"""Called now and then with (abstract states expanded, abstract states found)."""


class Explorer:
    """Builds an `Exploration` (see the module docstring); use `explore`."""

    def __init__(
        self,
        chart: CompiledChart,
        max_configurations: int,
        progress: Progress | None,
        max_memory: int = DEFAULT_MAX_MEMORY,
        components: RegionComponents | None = None,
    ) -> None:
        if max_configurations < 1:
            raise ValueError("max_configurations must be at least 1")
        if max_memory < 1:
            raise ValueError("max_memory must be at least 1")
        self.max_memory = max_memory
        self.chart = chart
        self.named = named_events(chart)
        self.scope = ExplorerScope(chart, self.named)
        self.progress = progress
        self.result = Exploration(chart, Tables(chart), tuple(chart.events), max_configurations)
        self.index: dict[int, int] = {}
        """(valuation number << 64 | history number << 32 | configuration number) → node id."""
        self.outcomes = SharedOutcomes()
        self.runs = MacrostepRuns(chart, self.result, self.outcomes)
        self.result.tracked = self.runs.tracked.names
        self.result.tracking_notes = list(self.runs.tracked.notes)
        self.components = components
        self.tags = array("i")
        """Per node, the component whose events it is expanded with (`EVERY`: all of them;
        see `statekit.analysis.compositional`)."""
        self.events_of: dict[int, tuple[str, ...]] = {EVERY: self.result.events}
        if components is not None:
            for k in range(len(components.components)):
                self.events_of[k] = components.events_of(k, self.result.events)

    # -- interning ------------------------------------------------------------------

    def working(self, number: int) -> Configuration:
        """The engine configuration (of the current scope) of configuration `number`."""
        scope = self.scope
        found = scope.configs.get(number)
        if found is None:
            ids = frozenset(self.result.configs[number])
            found = scope.configs[number] = scope.tables.configuration(ids)
            scope.numbers[found] = number
        return found

    def number(self, config: Configuration) -> int:
        """The configuration number of an engine configuration of the current scope."""
        scope = self.scope
        found = scope.numbers.get(config)
        if found is None:
            found = scope.numbers[config] = self.result.config_number(config.ordered)
            scope.configs[found] = config
        return found

    def target(
        self,
        config: Configuration,
        history: int,
        parent: int,
        slot: int,
        depth: int,
        valuation: int = 0,
        tag: int = EVERY,
    ) -> int:
        """The node of (config, history, valuation): created (reached by outcome `slot`
        of `parent`, expanded with the events of component `tag`) when new, BEYOND when
        new past the bound on abstract states."""
        result = self.result
        key = valuation << 64 | history << 32 | self.number(config)
        found = self.index.get(key)
        if found is not None:
            if tag != EVERY and self.tags[found] not in (EVERY, tag):
                raise ComponentsMet(found)
            return found
        count = len(result.config_index)
        if count >= result.max_configurations:
            if not any(limit.kind == "configurations" for limit in result.limits):
                result.limits.append(
                    Limit(
                        "configurations",
                        f"the exploration stopped at {count:,} abstract states "
                        "(--max-configurations)",
                    )
                )
            return BEYOND
        found = self.index[key] = result.add_node(
            key & 0xFFFFFFFF, history, parent, slot, depth, valuation
        )
        self.tags.append(tag)
        return found

    def new_scope(self) -> None:
        """Drop the scope (see the module docstring) and start a fresh one."""
        # The engine's objects of the scope refer to each other (plans to their target
        # configurations, configurations to their tables); the cyclic collector, paused
        # during the exploration, would have to walk them all, so the tables forget them.
        self.scope.tables.forget_configurations()
        self.scope = ExplorerScope(self.chart, self.named)

    def out_of_memory(self, baseline: int, expanded: int) -> bool:
        """Whether the process grew by more than `max_memory` since the exploration began
        (then the `memory` limit is recorded)."""
        now = memory_in_use()
        if now is None or now - baseline <= self.max_memory:
            return False
        nodes = len(self.result.config_index)
        self.result.limits.append(
            Limit(
                "memory",
                f"the exploration stopped after {expanded:,} of {nodes:,} abstract states "
                f"found: it used more than {self.max_memory >> 20:,} MiB of memory "
                "(--max-memory)",
            )
        )
        return True

    @staticmethod
    def history_key(history: History) -> HistoryKey:
        return tuple(sorted(history.items())) if history else ()

    def recorded(self, history: int, updates: tuple[tuple[int, tuple[int, ...]], ...]) -> int:
        """The number of history `history` with the records of a run's microsteps
        (applied in order, as the engine's microsteps write them)."""
        result = self.result
        values = dict(result.histories[history])
        values.update(updates)
        return result.history_number(values, self.history_key(values))

    def expand(self, node: int) -> None:
        """Every outcome of every declared event, and of every timer event armed here
        (`statekit.analysis.timers`), in abstract state `node` (the next one in order)."""
        result = self.result
        tables = self.scope.tables
        config = self.working(result.config_index[node])
        history_number = result.history_index[node]
        history = result.histories[history_number]
        valuation = result.valuation_index[node]
        depth = result.depth_index[node] + 1
        fireable = None if config.final else self.scope.selection.fireable_events(config)
        wildcard = fireable is not None and "*" in fireable
        outcomes = self.outcomes
        tag = self.tags[node]
        events = self.events_of[tag]
        armed = self.scope.timers.events(config)
        components = self.components
        if armed:
            if components is not None and tag != EVERY:
                armed = components.events_of(tag, armed)
            events = (*events, *armed)
        owner = components.event_component if components is not None else None
        shared, targets = result.shared, result.targets
        base = len(targets)
        for event in events:
            moved = tag if owner is None else owner.get(event, tag)
            if fireable is None:  # the engine's step selects nothing once the chart is final
                shared.append(outcomes.classified(tables, config, event, None, ()))
                targets.append(NOWHERE)
                continue
            if not wildcard and event not in fireable:
                shared.append(outcomes.undefined(event))
                targets.append(NOWHERE)
                continue
            static = data_free_macrostep(tables, config, event)
            if static.conflicts:
                self.runs.attribute(static.conflicts, node, event, ())
            if isinstance(static, StaticMacrostep):  # a livelock takes the general path below
                branch = outcomes.fired(event, (), outcomes.steps(static.plans))
                target = self.target(
                    static.target,
                    history_number,
                    node,
                    len(targets) - base,
                    depth,
                    valuation,
                    moved,
                )
                shared.append(branch)
                targets.append(target)
                continue
            if isinstance(static, NoCandidates):  # nothing can fire
                shared.append(outcomes.classified(tables, config, event, None, ()))
                targets.append(NOWHERE)
                continue
            for run in self.runs.runs_of(self.scope, node, config, history, valuation, event):
                if run.target is None:
                    shared.append(run.branch)
                    targets.append(NOWHERE)
                    continue
                reached = history_number
                if run.updates:
                    reached = self.recorded(history_number, run.updates)
                target = self.target(
                    run.target, reached, node, len(targets) - base, depth, run.valuation, moved
                )
                shared.append(run.branch)
                targets.append(target)
        result.checks += len(events)
        result.end_outcomes()

    def initial(self) -> None:
        """The outcomes of the initial macrostep (`Exploration.initial`), from every
        combination of start values of the tracked fields (`TrackedFields.starts`)."""
        result = self.result
        tables = self.scope.tables
        seen: set[tuple[object, ...]] = set()
        tracked = self.runs.tracked
        for start in tracked.starts():
            context = tracked.context(self.runs.context, start)
            differing = {
                name: value
                for name, value, default in zip(tracked.names, start, tracked.default, strict=True)
                if (type(value), value) != (type(default), default)
            }

            def replay(oracle: GuardOracle, values: ValueDomain) -> AbstractMacrostep:
                return abstract_initial_macrostep(tables, context, oracle, values)  # noqa: B023

            for assumptions, run, valuation in self.runs.enumerate(replay, start, -1, None, {}):
                steps = self.outcomes.steps(run.plans)
                if run.livelock:
                    outcome = livelock_branch(None, assumptions, steps)
                else:
                    history = dict(run.history)
                    number = result.history_number(history, self.history_key(history))
                    reached = result.valuation_number(valuation)
                    target = self.target(run.target, number, -1, len(result.initial), 0, reached)
                    fields = (None, assumptions, target, steps, Status.APPLIED, None, "applied")
                    outcome = _new(MacrostepBranch, (*fields, None))
                key = (outcome.target, steps, assumption_key(assumptions), outcome.basis)
                if key not in seen:  # start values the macrostep overwrites lead to one node
                    seen.add(key)
                    result.initial.append(outcome)
                    result.initial_starts.append(differing)

    def run(self) -> Exploration:
        """Explore breadth first from the initial macrostep."""
        began = time.perf_counter()
        result = self.result
        self.initial()
        baseline = memory_in_use()
        found = result.config_index
        i = 0
        while i < len(found):
            self.expand(i)
            i += 1
            if i % SCOPE_EXPANSIONS == 0:
                self.new_scope()
            if i % MEMORY_CHECK_EVERY == 0:
                if self.progress is not None:
                    self.progress(i, len(found))
                if baseline is not None and self.out_of_memory(baseline, i):
                    break
        if self.progress is not None:
            self.progress(i, len(found))
        result.seconds = time.perf_counter() - began
        if self.components is not None:
            result.components, result.component_tags = self.components, self.tags
        feasibility = self.runs.feasibility
        result.reasoning = (feasibility.queries, feasibility.undecided, feasibility.seconds)
        return result


def explore(
    chart: CompiledChart,
    *,
    max_configurations: int = DEFAULT_MAX_CONFIGURATIONS,
    max_memory: int = DEFAULT_MAX_MEMORY,
    progress: Progress | None = None,
    components: RegionComponents | None = None,
) -> Exploration:
    """Explore the reachable abstract states of `chart` (see the module docstring).

    The cyclic garbage collector is paused meanwhile: the exploration allocates
    millions of long-lived objects and frees none, so every collection would scan
    them all again and the cost would grow faster than the state space.

    With `components` (`statekit.analysis.compositional`), a node reached by the events
    of one component is expanded with that component's events only (and the events no
    region handles); the initial nodes with every event. ComponentsMet when two
    components' nodes meet.
    """
    with collector_paused():
        return Explorer(chart, max_configurations, progress, max_memory, components).run()

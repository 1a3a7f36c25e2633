"""The explorer: every reachable configuration of a chart, by the engine's own macrosteps.

The abstract state is a configuration plus the recorded history values; the
context is abstracted away entirely. From the initial macrostep on, every
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

Runs are shared by every abstract state with the same configuration and the
same values of the history states the runs may read (history values matter
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
where they are the same. The engine's per-configuration caches (selection
inputs, memo verdicts, microstep plans) and the explorer's own caches keyed by
engine configurations live in a scope that is dropped and started afresh
every `SCOPE_EXPANSIONS` expanded abstract states, so they do not grow with the
exploration; what the search answers does not depend on it (every run is a
function of the configuration, the history and the event).

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

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from statekit.analysis.exploration import (
    BEYOND,
    NOWHERE,
    Exploration,
    History,
    HistoryKey,
    Limit,
    MacrostepBranch,
    SeenConflict,
    Step,
)
from statekit.analysis.guard_choices import MAX_CHOICES, ScriptedGuardOracle
from statekit.analysis.guards import UNKNOWN, Assumption, ThreeValued
from statekit.analysis.memory import memory_in_use
from statekit.analysis.timers import ArmedTimers
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart, StateKind
from statekit.engine.abstract import (
    AbstractMacrostep,
    abstract_initial_macrostep,
    abstract_macrostep,
    classify_unselected,
    data_free_macrostep,
)
from statekit.engine.algorithm import GuardOracle
from statekit.engine.macrostep_run import FailedGuard
from statekit.engine.result import LIVELOCK, UNDEFINED_TRANSITION, Status
from statekit.engine.tables import (
    Configuration,
    MicrostepPlan,
    NoCandidates,
    StaticMacrostep,
    Tables,
    TransitionConflict,
)
from statekit.engine.timers import ArmTimers, CancelTimers

DEFAULT_MAX_CONFIGURATIONS = 100_000
"""Default bound on abstract states (configuration + history values)."""
DEFAULT_MAX_MEMORY = 512 << 20
"""Default bound on the memory an exploration may grow the process by (bytes: 512 MiB)."""
MEMORY_CHECK_EVERY = 256
"""The process's memory is read after every this many expanded abstract states."""
MAX_RUNS = 1024
"""Distinct guard-outcome combinations enumerated per abstract state and event."""
SCOPE_EXPANSIONS = 2048
"""Expanded abstract states after which the engine's working tables and the caches keyed
by their configurations are dropped (see the module docstring): large enough that the
runs shared by abstract states of one configuration, and the configurations a stretch
both reaches and expands, are mostly reused; small enough that the caches stay about
16 MB."""

_new = tuple.__new__
Progress = Callable[[int, int], None]
"""Called now and then with (abstract states expanded, abstract states found)."""


Run = AbstractMacrostep
Leaf = tuple[tuple[Assumption, ...], Run]
"""One run of a macrostep: the assumptions its choices made, and what happened."""
AssumptionKey = tuple[tuple[int, int, bool], ...]


def _livelock(
    event: str | None, assumptions: tuple[Assumption, ...], steps: tuple[Step, ...]
) -> MacrostepBranch:
    """The LIVELOCK branch of a macrostep (its microsteps are those before the bound)."""
    return MacrostepBranch(
        event=event,
        assumptions=assumptions,
        target=NOWHERE,
        steps=steps,
        status=Status.REJECTED,
        reason=LIVELOCK,
        basis="livelock",
    )


def _assumption_key(assumptions: tuple[Assumption, ...]) -> AssumptionKey:
    # By the identity of the guard (an IR object, alive as long as the chart): hashing
    # the frozen IR dataclasses would walk their whole expression trees.
    return tuple([(id(a.check), a.transition, a.holds) for a in assumptions])


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A run reduced to what every abstract state with the same configuration (and the
    same values of the history states it read) shares: where it ends (an engine
    configuration of the current scope), its history records, and its branch: with
    `target` BEYOND when it fired (each state's own target is stored beside it), the
    branch itself when nothing fired (`target` None)."""

    branch: MacrostepBranch
    target: Configuration | None
    updates: tuple[tuple[int, tuple[int, ...]], ...]
    """The history records of its microsteps, in order."""


class _Scope:
    """The engine's working tables for a stretch of the search, and what the explorer
    caches per engine configuration of them (dropped together: see the module
    docstring)."""

    __slots__ = (
        "configs",
        "fireable",
        "numbers",
        "reads",
        "shared",
        "stable",
        "tables",
        "timers",
        "variants",
    )

    def __init__(self, chart: CompiledChart) -> None:
        self.tables = Tables(chart)
        self.configs: dict[int, Configuration] = {}
        """Configuration number (`Exploration.config_number`) → engine configuration."""
        self.numbers: dict[Configuration, int] = {}
        self.fireable: dict[Configuration, frozenset[str]] = {}
        self.stable: dict[Configuration, dict[object, bool]] = {}
        self.shared: dict[tuple[Configuration, str], list[_Prepared]] = {}
        self.variants: dict[
            tuple[Configuration, str],
            list[tuple[tuple[int, ...], tuple[object, ...], list[_Prepared]]],
        ] = {}
        self.reads: dict[tuple[Configuration, str | None], frozenset[int]] = {}
        self.timers = ArmedTimers(chart)


class Explorer:
    """Builds an `Exploration` (see the module docstring); use `explore`."""

    def __init__(
        self,
        chart: CompiledChart,
        max_configurations: int,
        progress: Progress | None,
        max_memory: int = DEFAULT_MAX_MEMORY,
    ) -> None:
        if max_configurations < 1:
            raise ValueError("max_configurations must be at least 1")
        if max_memory < 1:
            raise ValueError("max_memory must be at least 1")
        self.max_memory = max_memory
        self.chart = chart
        self.scope = _Scope(chart)
        self.seen_conflicts: set[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = set()
        self.three = ThreeValued()
        self.context = {name: f.default for name, f in chart.context.items()}
        self.progress = progress
        self.result = Exploration(chart, Tables(chart), tuple(chart.events), max_configurations)
        self.index: dict[int, int] = {}
        """(history number << 32 | configuration number) → node id."""
        self.unclassified: dict[tuple[str, Status, str | None, str], MacrostepBranch] = {}
        self.unclassified_by_event: dict[str, MacrostepBranch] = {}
        self.named = _named_events(chart)
        self.steps_of: dict[tuple[object, ...], Step] = {}
        self.step_tuples: dict[tuple[Step, ...], tuple[Step, ...]] = {}
        self.branches: dict[tuple[object, ...], MacrostepBranch] = {}

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

    def step(self, plan: MicrostepPlan) -> Step:
        """The interned `Step` of an engine plan (its configuration left out)."""
        segments = plan.segments
        if not segments:  # no effects: the common case, keyed without them
            key: tuple[object, ...] = (
                plan.transitions,
                plan.exit_order,
                plan.entry_order,
                plan.history_updates,
            )
            found = self.steps_of.get(key)
            if found is None:
                found = self.steps_of[key] = Step(
                    plan.transitions, plan.exit_order, plan.entry_order, plan.history_updates, ()
                )
            return found
        effects = tuple([e for segment in segments for e in segment.effects])
        key = (
            plan.transitions,
            plan.exit_order,
            plan.entry_order,
            plan.history_updates,
            # The chart's effects by identity (IR objects); the engine's timer effects,
            # made afresh for each plan, by kind and state.
            tuple(
                [
                    (type(e).__name__, e.state)
                    if isinstance(e, ArmTimers | CancelTimers)
                    else id(e)
                    for e in effects
                ]
            ),
        )
        found = self.steps_of.get(key)
        if found is None:
            found = self.steps_of[key] = Step(
                plan.transitions, plan.exit_order, plan.entry_order, plan.history_updates, effects
            )
        return found

    def steps(self, plans: tuple[MicrostepPlan, ...]) -> tuple[Step, ...]:
        """The interned steps of a macrostep's plans."""
        out = tuple([self.step(p) for p in plans])
        return self.step_tuples.setdefault(out, out)

    def fired(
        self, event: str | None, assumptions: tuple[Assumption, ...], steps: tuple[Step, ...]
    ) -> MacrostepBranch:
        """The shared APPLIED branch of these steps (its target BEYOND: each abstract state
        stores its own)."""
        key = (event, _assumption_key(assumptions), steps) if assumptions else (event, steps)
        found = self.branches.get(key)
        if found is None:
            fields = (event, assumptions, BEYOND, steps, Status.APPLIED, None, "applied", None)
            found = self.branches[key] = _new(MacrostepBranch, fields)
        return found

    def target(
        self, config: Configuration, history: int, parent: int, slot: int, depth: int
    ) -> int:
        """The node of (config, history): created (reached by outcome `slot` of `parent`)
        when new, BEYOND when new past the bound on abstract states."""
        result = self.result
        key = history << 32 | self.number(config)
        found = self.index.get(key)
        if found is not None:
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
        found = self.index[key] = result.add_node(key & 0xFFFFFFFF, history, parent, slot, depth)
        return found

    def new_scope(self) -> None:
        """Drop the scope (see the module docstring) and start a fresh one."""
        # The engine's objects of the scope refer to each other (plans to their target
        # configurations, configurations to their tables); the cyclic collector, paused
        # during the exploration, would have to walk them all, so the tables forget them.
        self.scope.tables.forget_configurations()
        self.scope = _Scope(self.chart)

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

    # -- enumeration of guard outcomes --------------------------------------------

    def stable_facts(self, config: Configuration) -> dict[object, bool]:
        """What is known at the start of a macrostep from a stable configuration.

        A macrostep ends (short of a final chart) only when no eventless
        transition is enabled, so every `always` candidate of the configuration
        had a failing guard then; one whose guards all hold here but one on data
        had *that* guard false, and it stays false until an `assign` changes a
        field it reads.
        """
        stable = self.scope.stable
        found = stable.get(config)
        if found is not None:
            return found
        facts: dict[object, bool] = {}
        eventless, transitions = self.chart.eventless, self.chart.transitions
        for state in config.atomic:
            for tid in eventless[state]:
                unknown = []
                for check in transitions[tid].guards:
                    value, key, info = self.three.lookup(check.expression, config.ids)
                    if value is False:
                        break
                    if value is UNKNOWN:
                        unknown.append((key, info))
                else:
                    if len(unknown) == 1:
                        key, info = unknown[0]
                        facts[(key, tuple([self.context[f] for f in info.fields]))] = False
        stable[config] = facts
        return facts

    def enumerate(
        self,
        start: Callable[[GuardOracle], AbstractMacrostep],
        node: int,
        event: str | None,
        known: dict[object, bool],
    ) -> list[Leaf]:
        """Every distinct run of a macrostep over the choices of its data guards."""
        script: list[bool] = []
        runs: list[Leaf] = []
        cut = False
        while True:
            oracle = ScriptedGuardOracle(script, self.three, known)
            run = start(oracle)
            if oracle.cut and not cut:
                cut = True
                why = f"more than {MAX_CHOICES} data-guard decisions in one macrostep"
                self.branching_limit(node, event, why)
            assumptions = tuple(oracle.assumptions)
            runs.append((assumptions, run))
            self.attribute(run.conflicts, node, event, assumptions)
            del script[oracle.pos :]
            while script and not script[-1]:
                script.pop()
            if not script:
                return runs
            if len(runs) >= MAX_RUNS:
                why = f"more than {MAX_RUNS} guard-outcome combinations in one macrostep"
                self.branching_limit(node, event, why)
                return runs
            script[-1] = False

    def attribute(
        self,
        conflicts: tuple[TransitionConflict, ...],
        node: int,
        event: str | None,
        assumptions: tuple[Assumption, ...],
    ) -> None:
        """Record the conflict resolutions not seen before as seen in the macrostep of
        `event` from `node` (each with its configuration from the exploration's tables:
        those of the scope are dropped)."""
        seen = self.seen_conflicts
        for conflict in conflicts:
            key = (conflict.configuration.ordered, conflict.enabled, conflict.kept)
            if key not in seen:
                seen.add(key)
                result = self.result
                kept = result.config_at(result.config_number(key[0]))
                conflict = dataclasses.replace(conflict, configuration=kept)
                result.conflicts.append(SeenConflict(conflict, node, event, assumptions))

    def branching_limit(self, node: int, event: str | None, why: str) -> None:
        self.result.limits.append(Limit("branching", why, node, event))

    # -- outcomes -----------------------------------------------------------------

    def classified(
        self,
        config: Configuration,
        event: str,
        failed: FailedGuard | None,
        assumptions: tuple[Assumption, ...],
    ) -> MacrostepBranch:
        """The outcome of an event that selected nothing (shared by every configuration
        where it is the same)."""
        status, reason, basis = classify_unselected(self.scope.tables, config, event, failed)
        if failed is None and not assumptions:
            # The same fields from every configuration: one shared branch per event and
            # classification instead of one per (configuration, event).
            key = (event, status, reason, basis)
            found = self.unclassified.get(key)
            if found is None:
                found = self.unclassified[key] = MacrostepBranch(
                    event=event,
                    assumptions=(),
                    target=NOWHERE,
                    steps=(),
                    status=status,
                    reason=reason,
                    basis=basis,
                )
            return found
        guard = None if failed is None else (id(failed[0]), failed[1].id)
        shared = (event, status, reason, basis, _assumption_key(assumptions), guard)
        branch = self.branches.get(shared)
        if branch is None:
            branch = self.branches[shared] = MacrostepBranch(
                event=event,
                assumptions=assumptions,
                target=NOWHERE,
                steps=(),
                status=status,
                reason=reason,
                basis=basis,
                failed=failed,
            )
        return branch

    def undefined(self, event: str) -> MacrostepBranch:
        """The outcome of an event for which no active state has a transition, `already`
        or `reject` entry (UNDEFINED_TRANSITION): decided without a macrostep and without
        filling the engine's per-configuration caches, shared by every configuration."""
        key = (event, Status.REJECTED, UNDEFINED_TRANSITION, "undefined")
        found = self.unclassified.get(key)
        if found is None:
            found = self.unclassified[key] = MacrostepBranch(
                event=event,
                assumptions=(),
                target=NOWHERE,
                steps=(),
                status=Status.REJECTED,
                reason=UNDEFINED_TRANSITION,
                basis="undefined",
            )
        self.unclassified_by_event[event] = found
        return found

    def fireable_events(self, config: Configuration) -> frozenset[str]:
        """The events some active state has a transition for, or that an `already` or
        `reject` entry of an active state (or the root) may classify: every other event is
        UNDEFINED_TRANSITION here (the chart not being final)."""
        fireable = self.scope.fireable
        found = fireable.get(config)
        if found is None:
            candidates, named = self.chart.candidates, self.named
            out: set[str] = set(named[0])
            for state in config.atomic:
                out.update(candidates[state])
            for state in config.ordered:
                out.update(named[state])
            found = fireable[config] = frozenset(out)
        return found

    def history_reads(self, config: Configuration, event: str | None) -> frozenset[int]:
        """The history states whose values a selection for `event` (None: eventless) in
        `config` may read: those that candidate transitions target, and the history
        states in their defaults. Only through them can a macrostep depend on history."""
        key = (config, event)
        reads = self.scope.reads
        found = reads.get(key)
        if found is None:
            out: set[int] = set()
            targeting = self.scope.tables.history_targeting
            if targeting:
                table, eventless = self.chart.candidates, self.chart.eventless
                for state in config.atomic:
                    ids = eventless[state] if event is None else table[state].get(event, ())
                    for tid in targeting.intersection(ids):
                        for target in self.chart.transitions[tid].targets:
                            self._history_closure(target, out)
            found = reads[key] = frozenset(out)
        return found

    def _history_closure(self, state: int, out: set[int]) -> None:
        node = self.chart.states[state]
        if node.kind is StateKind.HISTORY and state not in out:
            out.add(state)
            for s in node.history_default:
                self._history_closure(s, out)

    def run_reads(self, config: Configuration, run: Run) -> frozenset[int]:
        """The history states one run may have read (every selection that fired)."""
        if not self.scope.tables.history_targeting:
            return frozenset()
        out: frozenset[int] = frozenset()
        source = config
        for event, plan in zip(run.selected_for, run.plans, strict=True):
            out |= self.history_reads(source, event)
            source = plan.target
        return out

    def runs_of(
        self, node: int, config: Configuration, history: History, event: str
    ) -> list[_Prepared]:
        """The runs of `event` from `node` (in `config` with `history`), reused for every
        node with the same configuration and the same values of the history states the
        runs read."""
        scope = self.scope
        key = (config, event)
        found = scope.shared.get(key)
        if found is not None:
            return found
        variants = scope.variants.get(key, ())
        for ids, values, runs in variants:
            if tuple([history.get(h) for h in ids]) == values:
                return runs
        tables, context = scope.tables, self.context

        def start(oracle: GuardOracle) -> AbstractMacrostep:
            return abstract_macrostep(tables, config, history, context, event, oracle)

        leaves = self.enumerate(start, node, event, self.stable_facts(config))
        reads: frozenset[int] = frozenset().union(*(self.run_reads(config, r) for _, r in leaves))
        runs = self.prepare(config, event, leaves)
        if not reads:
            scope.shared[key] = runs
        else:
            ids = tuple(sorted(reads))
            values = tuple([history.get(h) for h in ids])
            scope.variants.setdefault(key, []).append((ids, values, runs))
        return runs

    def prepare(self, config: Configuration, event: str, leaves: list[Leaf]) -> list[_Prepared]:
        """The distinct runs of one macrostep (same end, same transitions, same history
        records, or the same classification), in the order found."""
        out: list[_Prepared] = []
        seen: set[object] = set()
        for assumptions, run in leaves:
            if run.livelock:
                key: object = ("livelock",)
                outcome = _livelock(event, assumptions, self.steps(run.plans))
                prepared = _Prepared(outcome, None, ())
            elif not run.fired:
                failed = run.failed_guard
                outcome = self.classified(config, event, failed, assumptions)
                key = (outcome.reason, outcome.basis, failed and (id(failed[0]), failed[1].id))
                prepared = _Prepared(outcome, None, ())
            else:
                plans = run.plans
                updates = tuple(u for plan in plans for u in plan.history_updates)
                key = (run.target, tuple(p.transitions for p in plans), updates)
                if key in seen:
                    continue
                branch = self.fired(event, assumptions, self.steps(plans))
                prepared = _Prepared(branch, run.target, updates)
            if key not in seen:
                seen.add(key)
                out.append(prepared)
        return out

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
        depth = result.depth_index[node] + 1
        fireable = None if config.final else self.fireable_events(config)
        wildcard = fireable is not None and "*" in fireable
        undefined = self.unclassified_by_event
        events = result.events
        armed = self.scope.timers.events(config)
        if armed:
            events = (*events, *armed)
        shared, targets = result.shared, result.targets
        base = len(targets)
        for event in events:
            if fireable is None:  # the engine's step selects nothing once the chart is final
                shared.append(self.classified(config, event, None, ()))
                targets.append(NOWHERE)
                continue
            if not wildcard and event not in fireable:
                found = undefined.get(event)
                shared.append(self.undefined(event) if found is None else found)
                targets.append(NOWHERE)
                continue
            static = data_free_macrostep(tables, config, event)
            if static.conflicts:
                self.attribute(static.conflicts, node, event, ())
            if isinstance(static, StaticMacrostep):  # a livelock takes the general path below
                branch = self.fired(event, (), self.steps(static.plans))
                target = self.target(
                    static.target, history_number, node, len(targets) - base, depth
                )
                shared.append(branch)
                targets.append(target)
                continue
            if isinstance(static, NoCandidates):  # nothing can fire
                shared.append(self.classified(config, event, None, ()))
                targets.append(NOWHERE)
                continue
            for run in self.runs_of(node, config, history, event):
                if run.target is None:
                    shared.append(run.branch)
                    targets.append(NOWHERE)
                    continue
                reached = history_number
                if run.updates:
                    reached = self.recorded(history_number, run.updates)
                target = self.target(run.target, reached, node, len(targets) - base, depth)
                shared.append(run.branch)
                targets.append(target)
        result.checks += len(events)
        result.end_outcomes()

    def initial(self) -> None:
        """The outcomes of the initial macrostep (`Exploration.initial`)."""
        result = self.result
        tables, context = self.scope.tables, self.context

        def start(oracle: GuardOracle) -> AbstractMacrostep:
            return abstract_initial_macrostep(tables, context, oracle)

        for assumptions, run in self.enumerate(start, -1, None, {}):
            steps = self.steps(run.plans)
            if run.livelock:
                outcome = _livelock(None, assumptions, steps)
            else:
                history = dict(run.history)
                number = result.history_number(history, self.history_key(history))
                target = self.target(run.target, number, -1, len(result.initial), 0)
                fields = (None, assumptions, target, steps, Status.APPLIED, None, "applied", None)
                outcome = _new(MacrostepBranch, fields)
            result.initial.append(outcome)

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
        return result


def _named_events(chart: CompiledChart) -> tuple[frozenset[str], ...]:
    """State id → the events its `already` and `reject` entries name (`*` included)."""
    return tuple(
        frozenset(entry.event for entry in (*state.already, *state.reject))
        for state in chart.states
    )


def explore(
    chart: CompiledChart,
    *,
    max_configurations: int = DEFAULT_MAX_CONFIGURATIONS,
    max_memory: int = DEFAULT_MAX_MEMORY,
    progress: Progress | None = None,
) -> Exploration:
    """Explore the reachable abstract states of `chart` (see the module docstring).

    The cyclic garbage collector is paused meanwhile: the exploration allocates
    millions of long-lived objects and frees none, so every collection would scan
    them all again and the cost would grow faster than the state space.
    """
    with collector_paused():
        return Explorer(chart, max_configurations, progress, max_memory).run()

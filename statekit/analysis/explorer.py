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
    Node,
    SeenConflict,
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

DEFAULT_MAX_CONFIGURATIONS = 100_000
"""Default bound on abstract states (configuration + history values)."""
DEFAULT_MAX_MEMORY = 512 << 20
"""Default bound on the memory an exploration may grow the process by (bytes: 512 MiB)."""
MEMORY_CHECK_EVERY = 256
"""The process's memory is read after every this many expanded abstract states."""
MAX_RUNS = 1024
"""Distinct guard-outcome combinations enumerated per abstract state and event."""

_new = tuple.__new__
Progress = Callable[[int, int], None]
"""Called now and then with (abstract states expanded, abstract states found)."""


Run = AbstractMacrostep
Leaf = tuple[tuple[Assumption, ...], Run]
"""One run of a macrostep: the assumptions its choices made, and what happened."""


def _livelock(
    event: str | None, assumptions: tuple[Assumption, ...], steps: tuple[MicrostepPlan, ...]
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


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A run reduced to what every abstract state with the same configuration (and the
    same values of the history states it read) shares: its steps, where it ends, its
    history records, and, when nothing fired, its branch itself."""

    assumptions: tuple[Assumption, ...]
    steps: tuple[MicrostepPlan, ...]
    target: Configuration | None
    outcome: MacrostepBranch | None
    updates: tuple[tuple[int, tuple[int, ...]], ...]
    """The history records of its microsteps, in order."""


def _prepared(
    assumptions: tuple[Assumption, ...],
    steps: tuple[MicrostepPlan, ...],
    target: Configuration | None,
    outcome: MacrostepBranch | None,
) -> _Prepared:
    updates = tuple(u for plan in steps for u in plan.history_updates)
    return _Prepared(
        assumptions=assumptions, steps=steps, target=target, outcome=outcome, updates=updates
    )


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
        self.tables = tables = Tables(chart)
        self.seen_conflicts: set[TransitionConflict] = set()
        self.three = ThreeValued()
        self.context = {name: f.default for name, f in chart.context.items()}
        self.progress = progress
        self.result = Exploration(chart, tables, tuple(chart.events), max_configurations)
        self.index: dict[tuple[Configuration, HistoryKey], int] = {}
        self.unclassified: dict[tuple[str, Status, str | None, str], MacrostepBranch] = {}
        self.fireable: dict[Configuration, frozenset[str]] = {}
        self.unclassified_by_event: dict[str, MacrostepBranch] = {}
        self.named = _named_events(chart)
        self.stable: dict[Configuration, dict[object, bool]] = {}
        self.shared: dict[tuple[Configuration, str], list[_Prepared]] = {}
        self.variants: dict[
            tuple[Configuration, str],
            list[tuple[tuple[int, ...], tuple[object, ...], list[_Prepared]]],
        ] = {}
        self.reads: dict[tuple[Configuration, str | None], frozenset[int]] = {}
        self.timers = ArmedTimers(chart)

    # -- abstract states ----------------------------------------------------------

    def applied(
        self,
        event: str | None,
        assumptions: tuple[Assumption, ...],
        steps: tuple[MicrostepPlan, ...],
        config: Configuration,
        history: History,
        key: HistoryKey,
        parent: int,
        depth: int,
    ) -> MacrostepBranch:
        """The APPLIED branch that ends in (config, history); its node is created (reached
        by this branch) when new."""
        found = self.index.get((config, key))
        nodes = self.result.nodes
        if found is None and len(nodes) >= self.result.max_configurations:
            if not any(limit.kind == "configurations" for limit in self.result.limits):
                self.result.limits.append(
                    Limit(
                        "configurations",
                        f"the exploration stopped at {len(nodes):,} abstract states "
                        "(--max-configurations)",
                    )
                )
            found = BEYOND
        target = len(nodes) if found is None else found
        fields = (event, assumptions, target, steps, Status.APPLIED, None, "applied", None)
        branch = _new(MacrostepBranch, fields)  # without the Python-level __new__
        if found is None:
            nodes.append(Node(len(nodes), config, history, key, parent, branch, depth))
            self.index[(config, key)] = branch.target
        return branch

    def out_of_memory(self, baseline: int, expanded: int) -> bool:
        """Whether the process grew by more than `max_memory` since the exploration began
        (then the `memory` limit is recorded)."""
        now = memory_in_use()
        if now is None or now - baseline <= self.max_memory:
            return False
        nodes = len(self.result.nodes)
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
        found = self.stable.get(config)
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
        self.stable[config] = facts
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
        `event` from `node`."""
        seen = self.seen_conflicts
        for conflict in conflicts:
            if conflict not in seen:
                seen.add(conflict)
                self.result.conflicts.append(SeenConflict(conflict, node, event, assumptions))

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
        """The outcome of an event that selected nothing (shared when nothing was assumed)."""
        status, reason, basis = classify_unselected(self.tables, config, event, failed)
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
        return MacrostepBranch(
            event=event,
            assumptions=assumptions,
            target=NOWHERE,
            steps=(),
            status=status,
            reason=reason,
            basis=basis,
            failed=failed,
        )

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
        found = self.fireable.get(config)
        if found is None:
            candidates, named = self.chart.candidates, self.named
            out: set[str] = set(named[0])
            for state in config.atomic:
                out.update(candidates[state])
            for state in config.ordered:
                out.update(named[state])
            found = self.fireable[config] = frozenset(out)
        return found

    def history_reads(self, config: Configuration, event: str | None) -> frozenset[int]:
        """The history states whose values a selection for `event` (None: eventless) in
        `config` may read: those that candidate transitions target, and the history
        states in their defaults. Only through them can a macrostep depend on history."""
        key = (config, event)
        found = self.reads.get(key)
        if found is None:
            out: set[int] = set()
            targeting = self.tables.history_targeting
            if targeting:
                table, eventless = self.chart.candidates, self.chart.eventless
                for state in config.atomic:
                    ids = eventless[state] if event is None else table[state].get(event, ())
                    for tid in targeting.intersection(ids):
                        for target in self.chart.transitions[tid].targets:
                            self._history_closure(target, out)
            found = self.reads[key] = frozenset(out)
        return found

    def _history_closure(self, state: int, out: set[int]) -> None:
        node = self.chart.states[state]
        if node.kind is StateKind.HISTORY and state not in out:
            out.add(state)
            for s in node.history_default:
                self._history_closure(s, out)

    def run_reads(self, config: Configuration, run: Run) -> frozenset[int]:
        """The history states one run may have read (every selection that fired)."""
        if not self.tables.history_targeting:
            return frozenset()
        out: frozenset[int] = frozenset()
        source = config
        for event, plan in zip(run.selected_for, run.plans, strict=True):
            out |= self.history_reads(source, event)
            source = plan.target
        return out

    def runs_of(self, node: Node, event: str) -> list[_Prepared]:
        """The runs of `event` from `node`, reused for every node with the same
        configuration and the same values of the history states the runs read."""
        config = node.config
        key = (config, event)
        found = self.shared.get(key)
        if found is not None:
            return found
        history = node.history
        variants = self.variants.get(key, ())
        for ids, values, runs in variants:
            if tuple([history.get(h) for h in ids]) == values:
                return runs
        tables, context = self.tables, self.context

        def start(oracle: GuardOracle) -> AbstractMacrostep:
            return abstract_macrostep(tables, config, history, context, event, oracle)

        leaves = self.enumerate(start, node.id, event, self.stable_facts(config))
        reads: frozenset[int] = frozenset().union(*(self.run_reads(config, r) for _, r in leaves))
        runs = self.prepare(config, event, leaves)
        if not reads:
            self.shared[key] = runs
        else:
            ids = tuple(sorted(reads))
            values = tuple([history.get(h) for h in ids])
            self.variants.setdefault(key, []).append((ids, values, runs))
        return runs

    def prepare(
        self, config: Configuration | None, event: str | None, leaves: list[Leaf]
    ) -> list[_Prepared]:
        """The distinct runs of one macrostep (same end, same transitions, same history
        records, or the same classification), in the order found."""
        out: list[_Prepared] = []
        seen: set[object] = set()
        for assumptions, run in leaves:
            steps = run.plans
            if run.livelock:
                key: object = ("livelock",)
                outcome = _livelock(event, assumptions, steps)
                prepared = _prepared(assumptions, steps, None, outcome)
            elif not run.fired:
                assert config is not None and event is not None
                failed = run.failed_guard
                outcome = self.classified(config, event, failed, assumptions)
                key = (outcome.reason, outcome.basis, failed and (id(failed[0]), failed[1].id))
                prepared = _prepared(assumptions, (), None, outcome)
            else:
                prepared = _prepared(assumptions, steps, run.target, None)
                key = (run.target, tuple(p.transitions for p in steps), prepared.updates)
            if key not in seen:
                seen.add(key)
                out.append(prepared)
        return out

    def outcomes_of(self, node: Node, event: str, runs: list[_Prepared]) -> list[MacrostepBranch]:
        """The outcomes of prepared runs from `node` (perhaps made from another node with
        the same configuration: their history records are replayed onto this node's)."""
        out: list[MacrostepBranch] = []
        parent, depth = node.id, node.depth + 1
        for run in runs:
            outcome = run.outcome
            if outcome is None:
                assert run.target is not None
                if run.updates:
                    history, hkey = self.recorded(node, run.updates)
                else:
                    history, hkey = node.history, node.history_key
                outcome = self.applied(
                    event, run.assumptions, run.steps, run.target, history, hkey, parent, depth
                )
            out.append(outcome)
        return out

    def recorded(
        self, node: Node, updates: tuple[tuple[int, tuple[int, ...]], ...]
    ) -> tuple[History, HistoryKey]:
        """The node's history with the records of a run's microsteps (applied in order,
        as the engine's microsteps write them), and its key."""
        history = dict(node.history)
        history.update(updates)
        return history, self.history_key(history)

    def expand(self, node: Node) -> None:
        """Every outcome of every declared event, and of every timer event armed here
        (`statekit.analysis.timers`), in this abstract state."""
        tables, config, history = self.tables, node.config, node.history
        outcomes: list[MacrostepBranch] = []
        fireable = None if config.final else self.fireable_events(config)
        wildcard = fireable is not None and "*" in fireable
        undefined = self.unclassified_by_event
        events = self.result.events
        armed = self.timers.events(config)
        if armed:
            events = (*events, *armed)
        for event in events:
            if fireable is None:  # the engine's step selects nothing once the chart is final
                outcomes.append(self.classified(config, event, None, ()))
                continue
            if not wildcard and event not in fireable:
                found = undefined.get(event)
                outcomes.append(self.undefined(event) if found is None else found)
                continue
            static = data_free_macrostep(tables, config, event)
            self.attribute(static.conflicts, node.id, event, ())
            if isinstance(static, StaticMacrostep):  # a livelock takes the general path below
                outcome = self.applied(
                    event,
                    (),
                    static.plans,
                    static.target,
                    history,
                    node.history_key,
                    node.id,
                    node.depth + 1,
                )
                outcomes.append(outcome)
                continue
            if isinstance(static, NoCandidates):  # nothing can fire
                outcomes.append(self.classified(config, event, None, ()))
                continue
            outcomes.extend(self.outcomes_of(node, event, self.runs_of(node, event)))
        self.result.checks += len(events)
        node.outcomes = outcomes

    def run(self) -> Exploration:
        """Explore breadth first from the initial macrostep."""
        began = time.perf_counter()
        tables, context = self.tables, self.context

        def start(oracle: GuardOracle) -> AbstractMacrostep:
            return abstract_initial_macrostep(tables, context, oracle)

        for assumptions, run in self.enumerate(start, -1, None, {}):
            steps = run.plans
            if run.livelock:
                outcome = _livelock(None, assumptions, steps)
            else:
                history = run.history
                key = self.history_key(history)
                outcome = self.applied(None, assumptions, steps, run.target, history, key, -1, 0)
            self.result.initial.append(outcome)
        nodes = self.result.nodes
        baseline = memory_in_use()
        i = 0
        while i < len(nodes):
            self.expand(nodes[i])
            i += 1
            if i % MEMORY_CHECK_EVERY == 0:
                if self.progress is not None:
                    self.progress(i, len(nodes))
                if baseline is not None and self.out_of_memory(baseline, i):
                    break
        if self.progress is not None:
            self.progress(i, len(nodes))
        self.result.seconds = time.perf_counter() - began
        return self.result


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

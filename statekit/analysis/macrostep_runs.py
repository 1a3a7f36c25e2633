"""The runs of one macrostep from one abstract state, as the explorer stores them.

`MacrostepRuns.runs_of` replays a macrostep once per sequence of data-guard
choices (`statekit.analysis.guard_choices`), in the value domain that keeps
the tracked context fields exact (`statekit.analysis.tracked_context`), with
the runs whose outcomes cannot hold together left out
(`statekit.analysis.feasibility`), and reduces them to `PreparedRun`s: the
distinct runs, shared by every abstract state with the same configuration,
tracked values and values of the history states they read (cached in the
explorer's scope, `statekit.analysis.explorer_scope`). It also records the
conflict resolutions first seen on the way (`SeenConflict`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from statekit.analysis.exploration import Exploration, History, Limit, SeenConflict
from statekit.analysis.explorer_scope import ExplorerScope, PreparedRun
from statekit.analysis.feasibility import Feasibility
from statekit.analysis.guard_choices import (
    Leaf,
    ScriptedGuardOracle,
    enumerate_runs,
    stable_facts,
)
from statekit.analysis.guards import Assumption, ThreeValued
from statekit.analysis.shared_outcomes import SharedOutcomes, livelock_branch
from statekit.analysis.tracked_context import TrackedFields, TrackingDomain, Valuation
from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.ir import CompiledChart, Conditional, Effect, Foreach, Raise, Send
from statekit.engine.abstract import (
    ABSTRACT,
    AbstractMacrostep,
    AbstractValue,
    ValueDomain,
    abstract_macrostep,
)
from statekit.engine.selection import GuardOracle
from statekit.engine.tables import Configuration, Tables, TransitionConflict

QUEUEING_LOOP = (
    "a foreach raises or sends events, and the analysis runs its body at most once (a"
    " list's length is not known)"
)


def queueing_loops(chart: CompiledChart) -> bool:
    """Whether a `foreach` body raises or sends an event (its count matters to the queue)."""
    lists = [t.effects for t in chart.transitions]
    lists += [s.entry + s.exit for s in chart.states]
    return any(
        isinstance(e, Foreach) and any(isinstance(x, Raise | Send) for x in leaf_effects(e.effects))
        for effects in lists
        for e in _all_effects(effects)
    )


def _all_effects(effects: tuple[Effect, ...]) -> list[Effect]:
    """Every effect, `if` and `foreach` ones included, nested ones too."""
    out: list[Effect] = []
    for effect in effects:
        out.append(effect)
        if isinstance(effect, Conditional):
            for branch in effect.branches:
                out.extend(_all_effects(branch.effects))
            out.extend(_all_effects(effect.otherwise))
        elif isinstance(effect, Foreach):
            out.extend(_all_effects(effect.effects))
    return out


class MacrostepRuns:
    """The runs of macrosteps for one exploration (see the module docstring)."""

    def __init__(self, chart: CompiledChart, result: Exploration, outcomes: SharedOutcomes) -> None:
        self.chart = chart
        self.result = result
        self.outcomes = outcomes
        self.three = ThreeValued()
        self.context = {
            name: AbstractValue() if f.type.structured else f.default
            for name, f in chart.context.items()
        }
        """The abstract context: the declared defaults (read only through tracked fields); a
        list or record field is an unknown value from the start (its contents are never
        tracked)."""
        if queueing_loops(chart):
            result.limits.append(Limit("loops", QUEUEING_LOOP))
        self.tracked = TrackedFields(chart)
        self.feasibility = Feasibility(chart, frozenset(self.tracked.names))
        self.contexts: dict[int, dict[str, Any]] = {}
        """Valuation number → the abstract context with those tracked values."""
        self.seen_conflicts: set[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = set()

    def context_of(self, valuation: int) -> dict[str, Any]:
        """The abstract context with the tracked values of valuation number `valuation`."""
        found = self.contexts.get(valuation)
        if found is None:
            values = self.result.valuations[valuation]
            found = self.contexts[valuation] = self.tracked.context(self.context, values)
        return found

    def enumerate(
        self,
        run: Callable[[GuardOracle, ValueDomain], AbstractMacrostep],
        valuation: Valuation,
        node: int,
        event: str | None,
        known: dict[object, bool],
    ) -> list[Leaf]:
        """Every distinct run of a macrostep (`run` with an oracle and a value domain)
        from the tracked values `valuation` over the choices of its data guards
        (`enumerate_runs`), its conflicts and limits recorded."""
        tracked = self.tracked

        def start(oracle: ScriptedGuardOracle) -> tuple[AbstractMacrostep, Valuation]:
            if not tracked:
                return run(oracle, ABSTRACT), valuation
            domain = TrackingDomain(tracked, oracle)
            return run(oracle, domain), domain.end(valuation)

        leaves, limits = enumerate_runs(
            start, self.three, known, event, self.feasibility, tracked or None
        )
        for why in limits:
            self.result.limits.append(Limit("branching", why, node, event))
        for assumptions, found, _ in leaves:
            self.attribute(found.conflicts, node, event, assumptions)
        return leaves

    def stable_facts(
        self, scope: ExplorerScope, config: Configuration, valuation: int
    ) -> dict[object, bool]:
        """`stable_facts` of `config` with tracked values `valuation`, cached in `scope`."""
        key = (config, valuation)
        found = scope.stable.get(key)
        if found is None:
            context = self.context_of(valuation)
            found = stable_facts(self.chart, self.three, context, config)
            scope.stable[key] = found
        return found

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

    def runs_of(
        self,
        scope: ExplorerScope,
        node: int,
        config: Configuration,
        history: History,
        valuation: int,
        event: str,
    ) -> list[PreparedRun]:
        """The runs of `event` from `node` (in `config`, an engine configuration of
        `scope`, with `history` and tracked values `valuation`), reused for every node with
        the same configuration, tracked values and values of the history states the runs
        read."""
        key = (config, event, valuation)
        found = scope.shared.get(key)
        if found is not None:
            return found
        variants = scope.variants.get(key, ())
        for ids, values, runs in variants:
            if tuple([history.get(h) for h in ids]) == values:
                return runs
        tables, context = scope.tables, self.context_of(valuation)

        def replay(oracle: GuardOracle, values: ValueDomain) -> AbstractMacrostep:
            return abstract_macrostep(tables, config, history, context, event, oracle, values)

        values = self.result.valuations[valuation]
        known = self.stable_facts(scope, config, valuation)
        leaves = self.enumerate(replay, values, node, event, known)
        selection = scope.selection
        reads: frozenset[int] = frozenset().union(
            *(selection.run_reads(config, r) for _, r, _ in leaves)
        )
        runs = self.prepare(scope.tables, config, event, leaves)
        if not reads:
            scope.shared[key] = runs
        else:
            ids = tuple(sorted(reads))
            values = tuple([history.get(h) for h in ids])
            scope.variants.setdefault(key, []).append((ids, values, runs))
        return runs

    def prepare(
        self, tables: Tables, config: Configuration, event: str, leaves: list[Leaf]
    ) -> list[PreparedRun]:
        """The distinct runs of one macrostep (same end, same transitions, same history
        records, or the same classification), in the order found."""
        out: list[PreparedRun] = []
        seen: set[object] = set()
        for assumptions, run, valuation in leaves:
            if run.livelock:
                key: object = ("livelock",)
                outcome = livelock_branch(event, assumptions, self.outcomes.steps(run.plans))
                prepared = PreparedRun(outcome, None, ())
            elif not run.fired:
                failed = run.failed_guard
                outcome = self.outcomes.classified(tables, config, event, failed, assumptions)
                key = (outcome.reason, outcome.basis, failed and (id(failed[0]), failed[1].id))
                prepared = PreparedRun(outcome, None, ())
            else:
                plans = run.plans
                updates = tuple(u for plan in plans for u in plan.history_updates)
                number = self.result.valuation_number(valuation)
                key = (run.target, tuple(p.transitions for p in plans), updates, number)
                if key in seen:
                    continue
                branch = self.outcomes.fired(event, assumptions, self.outcomes.steps(plans))
                prepared = PreparedRun(branch, run.target, updates, number)
            if key not in seen:
                seen.add(key)
                out.append(prepared)
        return out

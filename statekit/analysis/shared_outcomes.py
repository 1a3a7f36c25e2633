"""The explorer's outcomes and microsteps, interned: one object per distinct value.

An exploration stores a branch per (abstract state, event); most of them are
the same everywhere (the same steps fired, the same rejection), so the
explorer asks `SharedOutcomes` for them and stores the shared object. Steps
are keyed by the engine plan's transitions, orders, history records and
effects (the chart's effects by identity: IR objects alive as long as the
chart); branches by their event, assumptions and steps or classification.
"""

from __future__ import annotations

from statekit.analysis.guards import Assumption
from statekit.analysis.macrostep_branches import BEYOND, NOWHERE, MacrostepBranch, Step
from statekit.engine.abstract import classify_unselected
from statekit.engine.macrostep_run import FailedGuard
from statekit.engine.result import LIVELOCK, UNDEFINED_TRANSITION, Status
from statekit.engine.tables import Configuration, MicrostepPlan, Tables
from statekit.engine.timers import ArmTimers, CancelTimers

_new = tuple.__new__
AssumptionKey = tuple[tuple[int, int, bool], ...]


def livelock_branch(
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


def assumption_key(assumptions: tuple[Assumption, ...]) -> AssumptionKey:
    """Assumptions as a cheap key: by the identity of the guard (an IR object, alive as
    long as the chart): hashing the frozen IR dataclasses would walk their whole
    expression trees."""
    return tuple([(id(a.check), a.transition, a.holds) for a in assumptions])


class SharedOutcomes:
    """Interned steps and branches of one exploration (see the module docstring)."""

    __slots__ = ("branches", "step_tuples", "steps_of", "unclassified", "unclassified_by_event")

    def __init__(self) -> None:
        self.steps_of: dict[tuple[object, ...], Step] = {}
        self.step_tuples: dict[tuple[Step, ...], tuple[Step, ...]] = {}
        self.branches: dict[tuple[object, ...], MacrostepBranch] = {}
        self.unclassified: dict[tuple[str, Status, str | None, str], MacrostepBranch] = {}
        self.unclassified_by_event: dict[str, MacrostepBranch] = {}
        """Event → its shared UNDEFINED_TRANSITION branch, once made."""

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
        key = (event, assumption_key(assumptions), steps) if assumptions else (event, steps)
        found = self.branches.get(key)
        if found is None:
            fields = (event, assumptions, BEYOND, steps, Status.APPLIED, None, "applied", None)
            found = self.branches[key] = _new(MacrostepBranch, fields)
        return found

    def classified(
        self,
        tables: Tables,
        config: Configuration,
        event: str,
        failed: FailedGuard | None,
        assumptions: tuple[Assumption, ...],
    ) -> MacrostepBranch:
        """The outcome of an event that selected nothing (shared by every configuration
        where it is the same)."""
        status, reason, basis = classify_unselected(tables, config, event, failed)
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
        shared = (event, status, reason, basis, assumption_key(assumptions), guard)
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
        found = self.unclassified_by_event.get(event)
        if found is not None:
            return found
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

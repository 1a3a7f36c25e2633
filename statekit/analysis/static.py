"""Facts read from the compiled chart alone, without exploring it."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis.guards import ThreeValued
from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.expressions.tree import ExprNode
from statekit.compiler.ir import (
    CompiledChart,
    GuardCheck,
    Raise,
    Send,
    StateKind,
    TransitionKind,
)


def mentioned_events(chart: CompiledChart) -> frozenset[str]:
    """Events that an `on`, `after`, `already`, `reject` (by name), `raise` or `send`
    mentions (an `after` entry mentions its timer event)."""
    used: set[str] = set()
    for transition in chart.transitions:
        if transition.event is not None:
            used.add(transition.event)
        used.update(
            e.event for e in leaf_effects(transition.effects) if isinstance(e, Raise | Send)
        )
    for state in chart.states:
        used.update(c.event for c in state.already + state.reject)
        used.update(
            e.event for e in leaf_effects(state.entry + state.exit) if isinstance(e, Raise | Send)
        )
    return frozenset(used)


def region_of(chart: CompiledChart, state: int) -> int:
    """The region `state` lies in: its nearest ancestor-or-self whose parent is a
    parallel state, or the root (0) when it lies in no region."""
    states = chart.states
    for s in (state, *states[state].ancestors):
        parent = states[s].parent
        if parent is not None and states[parent].kind is StateKind.PARALLEL:
            return s
    return 0


def event_owners(chart: CompiledChart, event: str) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The regions that own `event`, in document order, each with the states in it that
    mention the event: the sources of transitions on it or, when no transition is on it,
    the states whose `already`/`reject` name it. A state in no region belongs to the
    root (0)."""
    sources = sorted(
        {t.source for t in chart.transitions if t.kind is TransitionKind.EVENT and t.event == event}
    )
    if not sources:
        sources = [
            s.id for s in chart.states if any(c.event == event for c in s.already + s.reject)
        ]
    owners: dict[int, list[int]] = {}
    for source in sources:
        owners.setdefault(region_of(chart, source), []).append(source)
    return tuple((region, tuple(found)) for region, found in sorted(owners.items()))


@dataclass(frozen=True, slots=True)
class Shadowing:
    """Alternative `transition` can never be taken because of the earlier `by`:
    `why` is `unguarded`, `duplicate` (the same guards) or `weaker` (a subset)."""

    transition: int
    by: int
    why: str


def _always_true(check: GuardCheck, three: ThreeValued) -> bool:
    info = three.about(check.expression)
    return (
        not info.reads_data and not info.ids and three.truth(check.expression, frozenset()) is True
    )


def _conditions(checks: tuple[GuardCheck, ...], three: ThreeValued) -> frozenset[ExprNode]:
    return frozenset(c.expression.tree for c in checks if not _always_true(c, three))


def shadowed_alternatives(chart: CompiledChart) -> list[Shadowing]:
    """Alternatives (same source, same event, or both `always`, or both `done`) that an
    earlier one always pre-empts: the earlier one's conditions are a subset of theirs,
    so whenever this one would pass, the earlier one passes first."""
    three = ThreeValued()
    found: list[Shadowing] = []
    for state in chart.states:
        groups: dict[tuple[str, str | None], list[int]] = {}
        for tid in state.transitions:
            t = chart.transitions[tid]
            groups.setdefault((t.kind.value, t.event), []).append(tid)
        for alternatives in groups.values():
            conditions = [_conditions(chart.transitions[t].guards, three) for t in alternatives]
            for i, tid in enumerate(alternatives):
                for j in range(i):
                    if conditions[j] <= conditions[i]:
                        why = (
                            "unguarded"
                            if not conditions[j]
                            else "duplicate"
                            if conditions[j] == conditions[i]
                            else "weaker"
                        )
                        found.append(Shadowing(tid, alternatives[j], why))
                        break
    return found

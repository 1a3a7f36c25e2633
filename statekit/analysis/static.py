"""Facts read from the compiled chart alone, without exploring it."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis.guards import ThreeValued
from statekit.compiler.expressions.tree import ExprNode
from statekit.compiler.ir import CompiledChart, GuardCheck, Raise


def mentioned_events(chart: CompiledChart) -> frozenset[str]:
    """Events that an `on`, `already`, `reject` (by name) or `raise` mentions."""
    used: set[str] = set()
    for transition in chart.transitions:
        if transition.event is not None:
            used.add(transition.event)
        used.update(e.event for e in transition.effects if isinstance(e, Raise))
    for state in chart.states:
        used.update(c.event for c in state.already + state.reject)
        used.update(e.event for e in state.entry + state.exit if isinstance(e, Raise))
    return frozenset(used)


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

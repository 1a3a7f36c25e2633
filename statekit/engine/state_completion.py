"""The states a migration enters: a mapped configuration completed in a newer chart version.

An instance's configuration, mapped into a newer version (`statekit.engine.state_migration`),
may miss states that version requires: a region added to a parallel state the instance is
in, a child added to a state that was atomic, a state added around one it is in. The
migration enters them (`complete_configuration`):

- a missing ancestor of an active state is entered;
- a parallel state's missing region, and a compound state with no active child, are
  entered where the migration's `enter:` says (`{region: state inside it}`: the states
  from the key down to that state), else by default entry (the `initial:` the chart
  requires of every compound state, all regions of a parallel state), the same states
  an instance entering it now would have;
- below a state entered, default entry applies (or a deeper `enter:` entry).

A state the mapped configuration already enters something inside is left as it is: an
`enter:` entry only says where an instance goes where it has no state of its own.
Entering here is a mapping, not a transition: no entry effect runs and no eventless
transition is taken; the `after` timers of the states entered are armed
(`statekit.engine.timer_migration.arm_entered`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from statekit.compiler.ir import CompiledChart, StateKind

__all__ = ["Completion", "complete_configuration"]


@dataclass(frozen=True, slots=True)
class Completion:
    """A completed configuration (every active state's path, sorted) and the states the
    completion entered, in entry order (document order: ancestors first)."""

    configuration: tuple[str, ...]
    entered: tuple[str, ...]


def complete_configuration(
    ir: CompiledChart, configuration: Collection[str], enter: Mapping[str, str]
) -> Completion:
    """`configuration` (state paths of `ir`, each one it has) completed as the module
    docstring says; `enter` is the migration's `enter:` map (state → state inside it)."""
    states, index = ir.states, ir.path_index
    active = {index[path] for path in configuration}
    entered: set[int] = set()
    for state in list(active):
        for ancestor in states[state].ancestors:
            if ancestor and ancestor not in active:
                active.add(ancestor)
                entered.add(ancestor)
    chosen: dict[int, int] = {}  # compound state → the child `enter:` enters in it
    for key in sorted(enter, key=lambda k: k.count(".")):  # a deeper key decides below it
        _mark_chain(ir, index[key], index[enter[key]], chosen)

    def fill(state: int) -> None:
        node = states[state]
        if node.kind is StateKind.PARALLEL:
            inside = list(node.children)
        elif node.kind is StateKind.COMPOUND:
            inside = [c for c in node.children if c in active]
            if not inside:
                child = chosen.get(state)
                if child is None:
                    by_default: dict[int, int] = {}
                    for target in node.initial:
                        _mark_chain(ir, state, target, by_default)
                    for compound, next_child in by_default.items():
                        chosen.setdefault(compound, next_child)
                    child = chosen[state]
                inside = [child]
        else:
            return
        for child in inside:
            if child not in active:
                active.add(child)
                entered.add(child)
            fill(child)

    fill(0)
    return Completion(
        configuration=tuple(sorted(states[s].path for s in active if s)),
        entered=tuple(states[s].path for s in sorted(entered)),
    )


def _mark_chain(ir: CompiledChart, top: int, target: int, chosen: dict[int, int]) -> None:
    """Record in `chosen`, for each state from `top` down to `target`'s parent, the child
    on the way to `target`."""
    state = target
    while state != top:
        parent = ir.states[state].parent
        assert parent is not None  # `target` is `top` or inside it (the compiler checked)
        chosen[parent] = state
        state = parent

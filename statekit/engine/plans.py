"""Microstep plans: what one microstep does, as data, computed once per
(configuration, transitions) and cached by `statekit.engine.algorithm`.

A plan follows the spec's exitStates / executeTransitionContent / enterStates
(https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation): history is
recorded from the configuration before any exit; exit effects run in exit
order, each seeing the configuration before its state is removed; transition
effects run in selection order after every exit; entry effects run in entry
order, each seeing the configuration with its state added; entering a final
state raises `done.state.<parent>` (and `done.state.<grandparent>` when that
parallel state's regions are all final), except for a child of the root,
which ends the chart instead: its `exit` effects run right after its `entry` (the
instance ends, SCXML's exitInterpreter), the configuration staying the final one.
A state's `after` timers are armed after its entry effects and cancelled after its
exit effects (`statekit.engine.timers`): the plan carries them as two engine
effects, `ArmTimers` and `CancelTimers`, at the end of the state's segment, so a
microstep that enters or exits a state with timers has effects (the memo of
data-free macrosteps never takes it).
"""

from __future__ import annotations

from statekit.compiler.ir import HistoryKind, StateKind
from statekit.engine.tables import (
    Configuration,
    EffectSegment,
    MicrostepPlan,
    Tables,
    TimedEffect,
    is_in_final_state,
)
from statekit.engine.timers import ArmTimers, CancelTimers


def _done_events(tables: Tables, state: int, active: frozenset[int] | set[int]) -> tuple[str, ...]:
    """enterStates' done events for entering final `state` (none for the root)."""
    states = tables.states
    parent = states[state].parent
    if not parent:
        return ()
    events = [f"done.state.{states[parent].path}"]
    grandparent = states[parent].parent
    if (
        grandparent
        and states[grandparent].kind is StateKind.PARALLEL
        and all(
            is_in_final_state(states, c, frozenset(active)) for c in states[grandparent].children
        )
    ):
        events.append(f"done.state.{states[grandparent].path}")
    return tuple(events)


def ends_chart(tables: Tables, state: int) -> bool:
    """Whether entering `state` ends the chart by itself: a final child of a root that is
    not parallel (a top-level final state). Its `exit` effects then run right after its
    `entry` in the same microstep, as SCXML exits every state when the machine ends,
    while the configuration stays the final one (later events are TERMINAL_STATE)."""
    states = tables.states
    node = states[state]
    return (
        node.kind is StateKind.FINAL
        and node.parent == 0
        and states[0].kind is not StateKind.PARALLEL
    )


def build_plan(
    tables: Tables,
    config: Configuration,
    transitions: tuple[int, ...],
    exit_order: tuple[int, ...],
    entry_order: tuple[int, ...],
) -> MicrostepPlan:
    """What a microstep does, as data: history records, effect segments, new configuration."""
    states = tables.states
    history_updates: list[tuple[int, tuple[int, ...]]] = []
    for s in exit_order:
        for h in states[s].history_children:
            if states[h].history is HistoryKind.DEEP:
                value = tuple(a for a in config.atomic if states[s].contains(a))
            else:
                value = tuple(c for c in config.ordered if states[c].parent == s)
            history_updates.append((h, value))
    segments: list[EffectSegment] = []
    active = set(config.ids)
    timers = tables.chart.timers
    for s in exit_order:
        node = states[s]
        effects: tuple[TimedEffect, ...] = node.exit
        if node.timers:
            names = tuple(timers[t].name for t in node.timers)
            effects = (*effects, CancelTimers(node.path, names))
        if effects:
            segments.append(EffectSegment(effects=effects, active=frozenset(active), done=()))
        active.discard(s)
    after_exit = frozenset(active)
    for tid in transitions:
        effects = tables.transitions[tid].effects
        if effects:
            segments.append(EffectSegment(effects=effects, active=after_exit, done=()))
    for s in entry_order:
        node = states[s]
        active.add(s)
        done = _done_events(tables, s, active) if node.kind is StateKind.FINAL else ()
        effects = node.entry
        if node.timers:
            decls = tuple(timers[t] for t in node.timers)
            roles = tuple(f"timer {d.name}" for d in decls)
            effects = (*effects, ArmTimers(node.path, decls, roles))
        if effects or done:
            output = node.output if done else ()
            segments.append(
                EffectSegment(effects=effects, active=frozenset(active), done=done, output=output)
            )
        if node.exit and ends_chart(tables, s):  # the instance ends: its final state's exit
            segments.append(EffectSegment(effects=node.exit, active=frozenset(active), done=()))
    return MicrostepPlan(
        transitions=transitions,
        exit_order=exit_order,
        entry_order=entry_order,
        target=tables.configuration(frozenset(active)),
        history_updates=tuple(history_updates),
        segments=tuple(segments),
        exited=tuple(states[s].path for s in exit_order),
        entered=tuple(states[s].path for s in entry_order),
    )

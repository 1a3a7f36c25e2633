"""SCXML's exit and entry sets and the resolution of conflicting transitions, over the
compiled chart.

https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation

`compute_exit_set`, `compute_entry_set` (through `statekit.compiler.scxml_procedures`,
shared with the compiler) and `remove_conflicting_transitions` keep the spec's names.
They are pure functions of (tables, configuration, transitions, history) that only fill
the caches of the configuration; `statekit.engine.selection` calls the last one and
`statekit.engine.algorithm` the first two.
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.compiler import scxml_procedures
from statekit.compiler.ir import Transition
from statekit.engine.tables import Configuration, ConflictLoss, Tables, TransitionConflict

History = Mapping[int, tuple[int, ...]]
"""History-state ids mapped to the state ids they recorded."""
ConflictSink = list[TransitionConflict] | None
"""Where selections report the conflict resolutions that removed a transition (None: nowhere)."""
NO_HISTORY: History = {}
"""The empty history (a data-free selection never reads history)."""


def _domain(tables: Tables, t: Transition, history: History) -> int | None:
    if not t.targets_history:
        return t.domain
    return scxml_procedures.transition_domain(tables.states, t.source, t.targets, history.get)


def compute_exit_set(
    tables: Tables, config: Configuration, transitions: tuple[int, ...], history: History
) -> tuple[int, ...]:
    """SCXML computeExitSet: active descendants of each transition's domain, in exit order."""
    out: set[int] = set()
    states = tables.states
    for tid in transitions:
        t = tables.transitions[tid]
        domain = _domain(tables, t, history) if t.targets else None
        if domain is None:
            continue
        last = states[domain].last_descendant
        out.update(s for s in config.ordered if domain < s <= last)
    return tuple(sorted(out, reverse=True))


def compute_entry_set(
    tables: Tables, transitions: tuple[int, ...], history: History
) -> tuple[int, ...]:
    """SCXML computeEntrySet (one builder for all transitions), in entry order."""
    if len(transitions) == 1:
        static = tables.transitions[transitions[0]].entry_set
        if static is not None:
            return static
    builder = scxml_procedures.EntrySetBuilder(tables.states, history.get)
    for tid in transitions:
        t = tables.transitions[tid]
        if t.targets:
            builder.add_transition(t.targets, _domain(tables, t, history))
    return builder.result()


def remove_conflicting_transitions(
    tables: Tables,
    config: Configuration,
    enabled: tuple[int, ...],
    history: History,
    found: ConflictSink = None,
) -> tuple[int, ...]:
    """SCXML removeConflictingTransitions: of two transitions with intersecting exit
    sets, the one whose source is a descendant of the other's wins, else the earlier.

    When it removes a transition and `found` is a list, the `TransitionConflict` is appended.
    """
    if len(enabled) <= 1:
        return enabled
    cacheable = tables.history_targeting.isdisjoint(enabled)
    if cacheable:
        cached = config.cache.conflicts.get(enabled)
        if cached is not None:
            if found is not None and cached[1] is not None:
                found.append(cached[1])
            return cached[0]
    states = tables.states
    filtered: list[int] = []
    exit_sets: dict[int, frozenset[int]] = {}
    for t1 in enabled:
        exits1 = exit_sets[t1] = frozenset(compute_exit_set(tables, config, (t1,), history))
        source1 = tables.transitions[t1].source
        preempted = False
        to_remove: list[int] = []
        for t2 in filtered:
            if exits1 & exit_sets[t2]:
                if scxml_procedures.is_descendant(states, source1, tables.transitions[t2].source):
                    to_remove.append(t2)
                else:
                    preempted = True
                    break
        if not preempted:
            for t3 in to_remove:
                filtered.remove(t3)
            filtered.append(t1)
    result = tuple(filtered)
    conflict = None
    if len(result) < len(enabled):
        conflict = _conflict(tables, config, enabled, result, exit_sets)
        if found is not None:
            found.append(conflict)
    if cacheable:
        config.cache.conflicts[enabled] = (result, conflict)
    return result


def _conflict(
    tables: Tables,
    config: Configuration,
    enabled: tuple[int, ...],
    kept: tuple[int, ...],
    exit_sets: Mapping[int, frozenset[int]],
) -> TransitionConflict:
    """The record of a resolution that removed transitions (see `TransitionConflict`)."""
    states, transitions = tables.states, tables.transitions
    losses = []
    for dropped in enabled:
        if dropped in kept:
            continue
        for winner in kept:
            common = exit_sets[winner] & exit_sets[dropped]
            if not common:
                continue
            a, b = transitions[winner].source, transitions[dropped].source
            is_descendant = scxml_procedures.is_descendant
            nested = is_descendant(states, a, b) or is_descendant(states, b, a)
            losses.append(
                ConflictLoss(
                    kept=winner, dropped=dropped, common_exits=common, by_document_order=not nested
                )
            )
    return TransitionConflict(
        configuration=config, enabled=enabled, kept=kept, losses=tuple(losses)
    )

"""Structural parts of the W3C SCXML algorithm, over the state table.

https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation

These functions depend only on the tree (and, for history, on a lookup of
recorded history values), so the compiler uses them to precompute transition
domains and entry sets, and the engine uses the same functions when history
makes an entry set depend on the past. One implementation, no drift.

Our root plays the part of SCXML's `<scxml>` element: it is never exited or
entered and always counts as a candidate for the LCCA, even when it is a
parallel state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from statekit.compiler.ir import StateKind, StateNode

HistoryLookup = Callable[[int], tuple[int, ...] | None]


def no_history(_history_id: int) -> tuple[int, ...] | None:
    """A history lookup for a fresh instance: nothing recorded yet."""
    return None


def is_descendant(states: Sequence[StateNode], state: int, ancestor: int) -> bool:
    """Whether `state` is a proper descendant of `ancestor` (ids are pre-order)."""
    return ancestor < state <= states[ancestor].last_descendant


def proper_ancestors(states: Sequence[StateNode], state: int, upto: int | None) -> list[int]:
    """Ancestors of `state`, nearest first, stopping before `upto` (or at the root)."""
    out: list[int] = []
    for anc in states[state].ancestors:
        if anc == upto:
            break
        out.append(anc)
    return out


def find_lcca(states: Sequence[StateNode], ids: Sequence[int]) -> int:
    """The least common compound ancestor (the root counts as compound)."""
    head, tail = ids[0], ids[1:]
    for anc in states[head].ancestors:
        if (anc == 0 or states[anc].kind is StateKind.COMPOUND) and all(
            is_descendant(states, s, anc) for s in tail
        ):
            return anc
    return 0


def effective_targets(
    states: Sequence[StateNode], targets: Iterable[int], history: HistoryLookup
) -> list[int]:
    """Targets with history pseudo-states replaced by their recorded or default states."""
    out: list[int] = []
    for target in targets:
        node = states[target]
        if node.kind is StateKind.HISTORY:
            recorded = history(target)
            chosen = (
                recorded
                if recorded is not None
                else tuple(effective_targets(states, node.history_default, history))
            )
            out.extend(s for s in chosen if s not in out)
        elif target not in out:
            out.append(target)
    return out


def transition_domain(
    states: Sequence[StateNode], source: int, targets: Sequence[int], history: HistoryLookup
) -> int | None:
    """SCXML getTransitionDomain for an external transition; None when targetless."""
    effective = effective_targets(states, targets, history)
    if not effective:
        return None
    return find_lcca(states, [source, *effective])


class EntrySetBuilder:
    """SCXML computeEntrySet: addDescendantStatesToEnter / addAncestorStatesToEnter."""

    def __init__(self, states: Sequence[StateNode], history: HistoryLookup) -> None:
        self.states = states
        self.history = history
        self.to_enter: set[int] = set()

    def _covered(self, child: int) -> bool:
        node = self.states[child]
        return any(s == child or node.contains(s) for s in self.to_enter)

    def add_descendants(self, state: int) -> None:
        """addDescendantStatesToEnter."""
        node = self.states[state]
        if node.kind is StateKind.HISTORY:
            assert node.parent is not None
            recorded = self.history(state)
            chosen = recorded if recorded is not None else node.history_default
            for s in chosen:
                self.add_descendants(s)
            for s in chosen:
                self.add_ancestors(s, node.parent)
            return
        self.to_enter.add(state)
        if node.kind is StateKind.COMPOUND:
            for s in node.initial:
                self.add_descendants(s)
            for s in node.initial:
                self.add_ancestors(s, state)
        elif node.kind is StateKind.PARALLEL:
            for child in node.children:
                if not self._covered(child):
                    self.add_descendants(child)

    def add_ancestors(self, state: int, ancestor: int | None) -> None:
        """addAncestorStatesToEnter (never adds the root)."""
        for anc in proper_ancestors(self.states, state, ancestor):
            if anc == 0:
                break
            self.to_enter.add(anc)
            if self.states[anc].kind is StateKind.PARALLEL:
                for child in self.states[anc].children:
                    if not self._covered(child):
                        self.add_descendants(child)

    def add_transition(self, targets: Sequence[int], domain: int | None) -> None:
        """Add the states one transition enters (its domain computed by the caller).

        A transition whose domain is a parallel root exits every region, so the
        regions it does not target are re-entered by default (the root itself is
        never entered, so addAncestorStatesToEnter does not reach it).
        """
        for s in targets:
            self.add_descendants(s)
        for s in effective_targets(self.states, targets, self.history):
            self.add_ancestors(s, domain)
        root = self.states[0]
        if domain == 0 and root.kind is StateKind.PARALLEL:
            for child in root.children:
                if not self._covered(child):
                    self.add_descendants(child)

    def result(self) -> tuple[int, ...]:
        """States to enter in entry (document) order."""
        return tuple(sorted(self.to_enter))


def entry_set(
    states: Sequence[StateNode], targets: Sequence[int], domain: int | None, history: HistoryLookup
) -> tuple[int, ...]:
    """The states entered by one transition, in entry order."""
    builder = EntrySetBuilder(states, history)
    builder.add_transition(targets, domain)
    return builder.result()


def default_entry(states: Sequence[StateNode], state: int) -> tuple[int, ...]:
    """Everything entered when `state` is entered by default (no history involved)."""
    builder = EntrySetBuilder(states, no_history)
    builder.add_descendants(state)
    return builder.result()


def static_classification(
    states: Sequence[StateNode], active: Iterable[int], event: str
) -> tuple[int | None, str | None, int | None]:
    """The `already`/`reject` entries that classify an event nothing fired for.

    Among the `active` states: the deepest one listing `event` in `already`
    (None if none), and the most specific `reject` entry as (reason, state):
    the deepest state with a matching entry, an exact event name before `"*"`,
    then document order. The engine classifies configurations with it and the
    diagrams classify leaf states with it, so the two cannot drift.
    """
    already: tuple[int, int] | None = None
    best: tuple[int, bool, int] | None = None
    reason: str | None = None
    for s in active:
        node = states[s]
        if any(e.event == event for e in node.already):
            key = (-node.depth, s)
            if already is None or key < already:
                already = key
        for entry in node.reject:
            if entry.event == event or entry.event == "*":
                rank = (-node.depth, entry.event == "*", s)
                if best is None or rank < best:
                    best, reason = rank, entry.reason
    return (
        None if already is None else already[1],
        reason,
        None if best is None else best[2],
    )

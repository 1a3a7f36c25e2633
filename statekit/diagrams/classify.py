"""The static classification table: what each leaf state does with each declared event.

For a leaf state (atomic or final) and an event, the candidates are the event
transitions of the state and then of its ancestors (`chart.candidates`),
tried in order; the table keeps them up to and including the first one
without a guard (the later ones can never be reached). When none fires:
`ALREADY_APPLIED` if the state or an ancestor lists the event in `already`;
else, after failed guards, the failing guard's reason; else the most specific
`reject` entry (the deepest state first, an exact event before `"*"`); else
`UNDEFINED_TRANSITION`. A final child of a compound root makes the chart
final: only its own entries apply and anything else is `TERMINAL_STATE`.

Each row is one leaf as if it were the only active state of its region: in
a chart with orthogonal regions, an event's result combines the rows of the
active leaf of every region (a transition anywhere, then `already`, then the
first failing guard's reason, then the most specific reject; see
docs/semantics.md).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from statekit.compiler.ir import CompiledChart, StateKind, StateNode
from statekit.compiler.scxml_procedures import static_classification


class Fallback(enum.Enum):
    """What happens when no candidate transition fires."""

    NONE = "none"  # an unguarded candidate always fires
    ALREADY = "ALREADY_APPLIED"
    GUARD = "GUARD_REASON"  # REJECTED with the failing guard's reason
    REJECT = "REJECTED"
    TERMINAL = "TERMINAL_STATE"
    UNDEFINED = "UNDEFINED_TRANSITION"


@dataclass(frozen=True, slots=True)
class Cell:
    """One leaf state and one event: the candidate transitions tried, then the fallback.

    `reason` is the reject reason (REJECT, TERMINAL, UNDEFINED); `by` the state
    whose `already` or `reject` entry applies.
    """

    state: int
    event: str
    transitions: tuple[int, ...]
    fallback: Fallback
    reason: str | None = None
    by: int | None = None


def _cell(
    chart: CompiledChart, state: StateNode, event: str, terminal: bool, chain: tuple[int, ...]
) -> Cell:
    tried: list[int] = []
    if not terminal:
        for tid in chart.candidates[state.id].get(event, ()):
            tried.append(tid)
            if not chart.transitions[tid].guards:
                return Cell(state.id, event, tuple(tried), Fallback.NONE)
    # The same rule the engine classifies configurations with (compiler.structure).
    already, reason, by = static_classification(chart.states, chain, event)
    if already is not None:
        return Cell(state.id, event, tuple(tried), Fallback.ALREADY, None, already)
    if tried:
        return Cell(state.id, event, tuple(tried), Fallback.GUARD)
    if reason is not None:
        return Cell(state.id, event, (), Fallback.REJECT, reason, by)
    if terminal:
        return Cell(state.id, event, (), Fallback.TERMINAL, "TERMINAL_STATE")
    return Cell(state.id, event, (), Fallback.UNDEFINED, "UNDEFINED_TRANSITION")


def _row(chart: CompiledChart, state: StateNode) -> list[Cell]:
    terminal = (
        state.kind is StateKind.FINAL
        and state.parent == 0
        and chart.root.kind is StateKind.COMPOUND
    )
    chain = (state.id,) if terminal else (state.id, *state.ancestors)
    return [_cell(chart, state, event, terminal, chain) for event in chart.events]


def classify_cell(chart: CompiledChart, state: StateNode, event: str) -> Cell:
    """The classification of one leaf state and one event."""
    return next(c for c in _row(chart, state) if c.event == event)


def classify(chart: CompiledChart) -> tuple[Cell, ...]:
    """Every leaf state with every declared event, leaves in document order, events as declared."""
    return tuple(
        cell
        for state in chart.states
        if state.kind in (StateKind.ATOMIC, StateKind.FINAL)
        for cell in _row(chart, state)
    )

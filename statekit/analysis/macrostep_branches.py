"""One result of one explored macrostep (moved here from `analysis.exploration`, the
graph that holds them): a `MacrostepBranch` (one macrostep under one set of data-guard
assumptions) and its microsteps (`Step`), plain values that the explorer interns and
shares between every abstract state where they occur."""

from __future__ import annotations

from typing import NamedTuple

from statekit.analysis.guards import Assumption
from statekit.engine.macrostep_run import FailedGuard
from statekit.engine.result import Status
from statekit.engine.tables import TimedEffect

NOWHERE = -1
"""`MacrostepBranch.target` when nothing fired (the state is unchanged)."""
BEYOND = -2
"""`MacrostepBranch.target` when the target was not explored (over `max_configurations`)."""


class Step:
    """One microstep of an explored macrostep: the transitions it fired (selection order),
    the states it exited (exit order) and entered (entry order), the history values it
    recorded, and the effects it runs, in the engine's order (exit, transition, entry
    effects, with the engine's arming and cancelling of `after` timers). The explorer
    interns steps, so equal steps are one object (compared by identity)."""

    __slots__ = ("effects", "entry_order", "exit_order", "history_updates", "transitions")

    def __init__(
        self,
        transitions: tuple[int, ...],
        exit_order: tuple[int, ...],
        entry_order: tuple[int, ...],
        history_updates: tuple[tuple[int, tuple[int, ...]], ...],
        effects: tuple[TimedEffect, ...],
    ) -> None:
        self.transitions = transitions
        self.exit_order = exit_order
        self.entry_order = entry_order
        self.history_updates = history_updates
        self.effects = effects

    def __repr__(self) -> str:
        return f"Step(transitions={self.transitions!r})"


class MacrostepBranch(NamedTuple):
    """One branch of an explored macrostep: its result under one set of assumptions.

    `event` is None for the initial macrostep. `target` is the node it leads
    to (`NOWHERE` when nothing fired, `BEYOND` past the bound). `steps` are
    its microsteps in order (`Step`: transitions fired, states exited and
    entered, effects). `basis` is `applied`, `livelock`, or the engine's
    classification basis (`already`, `guard`, `reject`, `terminal`,
    `undefined`) when nothing fired; `failed` the guard that failed first.

    A named tuple, not a frozen dataclass: the exploration builds one per
    abstract state, event and run, and in Python 3.11 a frozen dataclass
    costs ten times as much to construct (a third of the exploration time).
    """

    event: str | None
    assumptions: tuple[Assumption, ...]
    target: int
    steps: tuple[Step, ...]
    status: Status
    reason: str | None
    basis: str
    failed: FailedGuard | None = None

    @property
    def fired(self) -> bool:
        """Whether a transition fired (APPLIED)."""
        return self.basis == "applied"

    def transitions(self) -> tuple[int, ...]:
        """Every transition fired, microstep after microstep (none for a LIVELOCK, whose
        microsteps the engine rolls back)."""
        if not self.fired:
            return ()
        return tuple(t for plan in self.steps for t in plan.transitions)

    def __repr__(self) -> str:
        return (
            f"MacrostepBranch({self.event!r}, {self.basis}, {self.reason!r}, target={self.target})"
        )

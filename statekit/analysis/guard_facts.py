"""What the feasibility of a run is asked and answers, shared by the question's two
answerers (`feasibility`: candidate values first; `smt`: the solver, imported only when
candidates do not settle it), so that neither imports the other for its types."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from statekit.compiler.expressions.evaluator import Evaluator
from statekit.compiler.expressions.tree import ExprNode


class Verdict(enum.Enum):
    """Whether a run's guard outcomes can all hold at once: proven so, proven not, or not
    settled within the budget (the run is then kept)."""

    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class GuardFact:
    """One data-guard outcome of a run: `tree` evaluated with the states of `active`
    (those it tests that were active), reading `reads` (context field → the value
    object the run had then: the same object, the same unknown) and the payload
    object `payload`, gave `holds`."""

    tree: ExprNode
    evaluate: Evaluator
    token: int
    active: frozenset[int]
    reads: tuple[tuple[str, object], ...]
    payload: object
    holds: bool

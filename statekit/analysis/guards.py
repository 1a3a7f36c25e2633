"""Guards abstracted three-valued: `active()` exact, data unknown.

The analysis knows the configuration but not the context or the payload. A
guard's typed expression tree is evaluated in Kleene's three-valued logic:
`active('s')` is decided on the configuration, `ctx.*`, `event.*` and `now`
(the step's clock reading: an input the analysis never fixes) are `UNKNOWN`,
`and`/`or`/`not` follow Kleene (`False and ?` is False, `True or
?` is True), a conditional with an unknown test is known only when both
branches agree, and any other construct with an unknown operand is unknown.
A subtree that reads no data is evaluated exactly by its compiled closure.
`UNKNOWN` is always a sound answer: the explorer then explores both outcomes.
"""

from __future__ import annotations

import enum
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from statekit.compiler.expressions.closures import compile_tree
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.tree import (
    Active,
    BoolOp,
    ContextRef,
    EventMeta,
    EventRef,
    ExprNode,
    IfExp,
    InstanceId,
    Literal,
    Not,
    Now,
    iter_nodes,
)
from statekit.compiler.ir import CompiledChart, GuardCheck


class Unknown(enum.Enum):
    """The third truth value: the outcome depends on data the analysis does not know."""

    UNKNOWN = "unknown"

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown.UNKNOWN
Truth = bool | Unknown
"""True, False or UNKNOWN."""


def _reads_data(node: ExprNode) -> bool:
    return any(
        isinstance(n, ContextRef | EventRef | EventMeta | Now | InstanceId)
        for n in iter_nodes(node)
    )


class ExprInfo:
    """What the analysis needs to know about one expression, computed once.

    `token` is the same for structurally equal trees (a named guard is
    compiled once per event where it is used), so that they share answers.
    """

    __slots__ = (
        "fields",
        "ids",
        "reads_clock",
        "reads_data",
        "reads_event",
        "reads_payload",
        "token",
    )

    def __init__(self, token: int, tree: ExprNode) -> None:
        nodes = list(iter_nodes(tree))
        self.token = token
        self.ids = frozenset(n.state_id for n in nodes if isinstance(n, Active))
        self.fields = tuple(sorted({n.field for n in nodes if isinstance(n, ContextRef)}))
        self.reads_payload = any(isinstance(n, EventRef) for n in nodes)
        self.reads_event = self.reads_payload or any(isinstance(n, EventMeta) for n in nodes)
        """Whether it reads the payload or what the event is (`_event.type`: known in
        every run, the payload's values are not)."""
        self.reads_clock = any(isinstance(n, Now) for n in nodes)
        self.reads_data = self.reads_event or self.reads_clock or bool(self.fields)


class ThreeValued:
    """Evaluates expressions three-valued on a set of active state ids, with caches.

    An expression's value depends on the data and on which of the states it
    tests with `active()` are active (its *relevant* active states), so the
    three-valued result is cached per (tree, relevant active states).
    """

    __slots__ = ("_cache", "_info", "_tokens")

    def __init__(self) -> None:
        self._info: dict[int, tuple[Expression, ExprInfo]] = {}
        self._tokens: dict[ExprNode, int] = {}
        self._cache: dict[tuple[int, frozenset[int]], Truth] = {}

    def about(self, expression: Expression) -> ExprInfo:
        """The facts about `expression` (cached by object identity)."""
        found = self._info.get(id(expression))
        if found is None:
            token = self._tokens.setdefault(expression.tree, len(self._tokens))
            # the expression is kept alive with its info, so its id is never reused
            found = self._info[id(expression)] = (expression, ExprInfo(token, expression.tree))
        return found[1]

    def truth(self, expression: Expression, active: AbstractSet[int]) -> Truth:
        """The truth value of a boolean expression in configuration `active`."""
        return self.lookup(expression, active)[0]

    def lookup(
        self, expression: Expression, active: AbstractSet[int]
    ) -> tuple[Truth, tuple[int, frozenset[int]], ExprInfo]:
        """(truth value, key, info): two evaluations with the same key and the same
        data have the same value, whatever else is active."""
        info = self.about(expression)
        ids = info.ids
        key = (info.token, ids & active if ids else ids)
        found = self._cache.get(key)
        if found is None:
            tree = expression.tree
            value = _value(tree, active) if info.reads_data else _exact(expression.evaluate, active)
            found = self._cache[key] = value if value is UNKNOWN else bool(value)
        return found, key, info


def _exact(evaluate: Any, active: AbstractSet[int]) -> Any:
    """A data-free expression's value; an arithmetic failure is UNKNOWN (the engine
    would refuse the step with EVALUATION_ERROR, which is not ours to decide here)."""
    try:
        return evaluate({}, {}, active)
    except Exception:
        return UNKNOWN


def _value(node: ExprNode, active: AbstractSet[int]) -> Any:
    """A subtree's value, or UNKNOWN."""
    match node:
        case ContextRef() | EventRef() | EventMeta() | Now() | InstanceId():
            return UNKNOWN
        case Literal(value=value):
            return value
        case Active(state_id=sid):
            return sid in active
        case Not(operand=x):
            v = _value(x, active)
            return UNKNOWN if v is UNKNOWN else not v
        case BoolOp(op=op, values=values):
            stop_on = op == "or"
            unknown = False
            for child in values:
                v = _value(child, active)
                if v is UNKNOWN:
                    unknown = True
                elif bool(v) is stop_on:
                    return v
            return UNKNOWN if unknown else not stop_on
        case IfExp(test=test, body=body, orelse=orelse):
            t = _value(test, active)
            if t is not UNKNOWN:
                return _value(body if t else orelse, active)
            b, o = _value(body, active), _value(orelse, active)
            same = b is not UNKNOWN and o is not UNKNOWN and type(b) is type(o) and b == o
            return b if same else UNKNOWN
    if _reads_data(node):
        return UNKNOWN
    return _exact(compile_tree(node), active)


EFFECT_CONDITION = -1
"""`Assumption.transition` for the condition of an `if` effect (no transition's guard)."""


@dataclass(frozen=True, slots=True)
class Assumption:
    """An outcome the explorer assumed for a guard on unknown data, on one transition
    (`transition` is `EFFECT_CONDITION` for the condition of an `if` effect)."""

    check: GuardCheck
    transition: int
    holds: bool

    def describe(self, chart: CompiledChart) -> str:
        """`guard next_attempt (event.attempt == ctx.attempt + 1) holds`."""
        verb = "holds" if self.holds else "fails"
        source = self.check.expression.source.strip()
        if self.check.name is not None:
            return f"guard {self.check.name} ({source}) {verb}"
        if self.transition == EFFECT_CONDITION:
            return f"effect condition ({source}) {verb}"
        t = chart.transitions[self.transition]
        trigger = t.event or t.kind.value
        where = chart.states[t.source].path or chart.name
        return f"condition ({source}) of {trigger} from '{where}' {verb}"


def describe_assumptions(chart: CompiledChart, assumptions: tuple[Assumption, ...]) -> str:
    """`assuming A and B` (empty when nothing was assumed)."""
    if not assumptions:
        return ""
    return "assuming " + " and ".join(a.describe(chart) for a in assumptions)

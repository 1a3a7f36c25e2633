"""Concrete payloads for a printed path, found and checked by replaying it through `Chart.send`.

The analysis decides which data-guard outcomes can hold together
(`statekit.analysis.feasibility`), over an abstract context; a path it prints
is made runnable here: `witness_payloads` searches, step by step and depth
first, for a payload of each event such that the real engine, from the
chart's initial state (with its declared defaults, or the start context a path
starts from: `TrackedNodes.start_context`), takes exactly the printed
step (its status, reason, fired transitions and configuration). Candidate
values of a field come from its declared type (enum values, both booleans,
null when nullable), from the literals the chart's expressions compare with
(each integer and its neighbours, each string, strings of each integer's
length and its neighbours', for `len`) and from the current context,
so a guard such as `event.amount > ctx.limit` is met by `ctx.limit + 1`. A
timer step is sent by its timer event's name, without a payload.

A rejection leaves the state as it was, so a rejection no payload brings
about here (it needs context the path's other steps do not give, say a low
battery on a path that never lowers it) gets None and the search goes on
past it. The search is bounded (`SEND_BUDGET` sends per path); past the bound,
or at an applied step it cannot take, the remaining steps get None: printed
as assumptions, never as payloads that were not checked.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from statekit.compiler.expressions.tree import Literal, iter_nodes
from statekit.compiler.ir import CompiledChart, FieldDecl
from statekit.compiler.value_types import BaseType
from statekit.engine.chart import Chart, StartError
from statekit.engine.result import Result
from statekit.engine.state import State

SEND_BUDGET = 20_000
"""Sends one path's search may make before it settles for the prefix it took."""

Payload = dict[str, Any]


class Expected:
    """What one printed step says the engine does (see `takes`)."""

    __slots__ = ("configuration", "context", "event", "reason", "status", "transitions")

    def __init__(
        self,
        event: str,
        status: str,
        reason: str | None,
        transitions: Sequence[int],
        configuration: str,
        context: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.event = event
        self.status = status
        self.reason = reason
        self.transitions = sorted(transitions)
        self.configuration = configuration
        self.context = tuple(context)
        """Context fields the step must leave with these values (the tracked ones)."""


def takes(result: Result, step: Expected) -> bool:
    """Whether `result` is the printed step: its classification, the transitions it
    fired and (when the step names them) the configuration it leads to and the values
    of the tracked context fields there."""
    if (result.status.value, result.reason) != (step.status, step.reason):
        return False
    fired = sorted(t.id for microstep in result.evidence for t in microstep.transitions)
    if fired != step.transitions:
        return False
    if step.configuration and step.configuration != configuration_text(result.state):
        return False
    context = result.state.context
    return all(
        name in context and (type(context[name]), context[name]) == (type(value), value)
        for name, value in step.context
    )


def configuration_text(state: State) -> str:
    """A state's configuration as paths print it: `{a, b.c}`."""
    return "{" + ", ".join(state.leaves) + "}"


class _Search:
    def __init__(
        self, chart: Chart, steps: Sequence[Expected], start: Mapping[str, Any] | None
    ) -> None:
        self.chart = chart
        self.start = start
        self.ir = chart.ir
        self.steps = steps
        self.sends = 0
        self.best: list[Payload | None] = []
        self.taken: list[Payload | None] = []
        self.failed: set[tuple[int, State]] = set()
        self.literals = chart_literals(self.ir)

    def run(self) -> list[Payload | None] | None:
        try:
            state = self.chart.start(self.start or None)
        except StartError:
            return None
        return list(self.taken) if self._from(0, state) else None

    def _from(self, index: int, state: State) -> bool:
        if len(self.taken) > len(self.best):
            self.best = list(self.taken)
        if index == len(self.steps):
            return True
        if (index, state) in self.failed or self.sends >= SEND_BUDGET:
            return False
        step = self.steps[index]
        for payload in self._payloads(step.event, state.context):
            if self.sends >= SEND_BUDGET:
                return False
            self.sends += 1
            result = self.chart.send(state, step.event, payload)
            if not takes(result, step):
                continue
            self.taken.append(payload)
            if self._from(index + 1, result.state):
                return True
            self.taken.pop()
        if step.status != "APPLIED" and self.sends < SEND_BUDGET:
            self.taken.append(None)  # not brought about here: assumed (the state is unchanged)
            if self._from(index + 1, state):
                return True
            self.taken.pop()
        self.failed.add((index, state))
        return False

    def _payloads(self, event: str, context: Mapping[str, Any]) -> Iterator[Payload]:
        declared = self.ir.events.get(event)
        if declared is None:  # a timer's event: delivered by name, without a payload
            yield {}
            return
        names = [f.name for f in declared.fields]
        choices = [candidates(f, context, self.literals) for f in declared.fields]
        for values in itertools.product(*choices):
            yield dict(zip(names, values, strict=True))


def witness_payloads(
    ir: CompiledChart, steps: Sequence[Expected], start: Mapping[str, Any] | None = None
) -> list[Payload | None]:
    """A checked payload for each step (None from the first step the search could not
    take on: see the module docstring), replayed from the initial state of an instance
    started with `start` (`Chart.start(context)`; None: the declared defaults)."""
    search = _Search(Chart(ir), steps, start)
    found = search.run()
    taken: list[Payload | None] = list(found if found is not None else search.best)
    return taken + [None] * (len(steps) - len(taken))


def chart_literals(ir: CompiledChart) -> tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]]:
    """The integers, numbers and strings the chart's guards and conditions mention."""
    ints: set[int] = set()
    floats: set[float] = set()
    strings: set[str] = set()
    for transition in ir.transitions:
        for check in transition.guards:
            for node in iter_nodes(check.expression.tree):
                if isinstance(node, Literal):
                    value = node.value
                    if isinstance(value, bool) or value is None:
                        continue
                    if isinstance(value, int):
                        ints.add(value)
                    elif isinstance(value, float):
                        floats.add(value)
                    else:
                        strings.add(value)
    return tuple(sorted(ints)), tuple(sorted(floats)), tuple(sorted(strings))


def candidates(
    decl: FieldDecl,
    context: Mapping[str, Any],
    literals: tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]],
) -> list[Any]:
    """The values tried for a payload field, first to last (see the module docstring)."""
    kind = decl.type
    ints, floats, strings = literals
    values: list[Any]
    if kind.enum is not None:
        values = list(kind.enum)
    elif kind.base is BaseType.BOOLEAN:
        values = [True, False]
    elif kind.base in (BaseType.INTEGER, BaseType.NUMBER):
        known = sorted({v for v in context.values() if type(v) is int} | set(ints))
        values = [1, 0, *(v + d for v in known for d in (0, 1, -1)), -1, 1_000_000]
        if kind.base is BaseType.NUMBER:
            values += [*floats, *(f + 0.5 for f in floats), *(f - 0.5 for f in floats)]
    elif kind.base is BaseType.STRING:
        texts = sorted({v for v in context.values() if type(v) is str} | set(strings))
        # strings of the lengths `len(...)` may be compared with
        lengths = sorted({n + d for n in ints for d in (0, 1, -1) if 0 <= n + d <= 64})
        values = ["a", "", *texts, *("a" * n for n in lengths)]
    else:
        values = []
    if kind.nullable or kind.base is BaseType.NULL:
        values.append(None)
    if decl.has_default:
        values.insert(0, decl.default)
    unique: dict[tuple[type, Any], Any] = {}
    for value in values:
        if kind.accepts(value):
            unique.setdefault((type(value), value), value)
    return list(unique.values())

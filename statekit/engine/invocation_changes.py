"""The children a macrostep starts and cancels, derived from the states each of its
microsteps exited and entered.

The step gives them directly (its trace or its plans, `Result` keeps them for a chart
that invokes), so finding a family's starts and cancels does not build the evidence;
the evidence's records have the same `exited` and `entered`, read when nothing else is
there. See `statekit.engine.family_outputs` for the values and the order rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

from statekit.compiler.invocations import Invocation
from statekit.compiler.ir import CompiledChart
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.family_outputs import InvocationCancel, InvocationStart

EMPTY_INPUT: Mapping[str, Any] = MappingProxyType({})


class Moves(Protocol):
    """One microstep's exit and entry, as paths in exit and entry order (a
    `MicrostepPlan`, a trace's `AppliedMicrostep`, an evidence `Microstep`)."""

    @property
    def exited(self) -> tuple[str, ...]: ...

    @property
    def entered(self) -> tuple[str, ...]: ...


def invocation_changes(
    chart: CompiledChart,
    moves: Iterable[Moves],
    context: Mapping[str, Any],
    active: frozenset[int],
) -> tuple[tuple[InvocationStart, ...], tuple[InvocationCancel, ...]]:
    """The children a macrostep starts and cancels, from its microsteps' `moves`: states with
    `invoke:` entered and not left start (in entry order, input evaluated in
    `context` and `active`, what the macrostep ended with); states left that were entered
    before it cancel theirs (in exit order). A state left and entered again in one
    macrostep cancels its child and starts a new one."""
    if not chart.invocations:
        return (), ()
    path_index, states = chart.path_index, chart.states
    pending: dict[str, Invocation] = {}  # entered in this macrostep, in entry order
    cancels: list[InvocationCancel] = []
    for micro in moves:
        for path in micro.exited:
            for invocation in states[path_index[path]].invocations:
                if pending.pop(invocation.id, None) is None:
                    cancels.append(InvocationCancel(invocation.id, path))
        for path in micro.entered:
            for invocation in states[path_index[path]].invocations:
                pending[invocation.id] = invocation
    starts = tuple(_start(chart, invocation, context, active) for invocation in pending.values())
    return starts, tuple(cancels)


def _start(
    chart: CompiledChart,
    invocation: Invocation,
    context: Mapping[str, Any],
    active: frozenset[int],
) -> InvocationStart:
    state = chart.states[invocation.state].path
    role = f"input of invoke '{invocation.id}' field"
    chart_name, version = invocation.chart, invocation.version
    try:
        if invocation.choice is not None:
            chart_name = _chosen(invocation, context, active)
        values = {
            name: computed_value(f"{role} '{name}'", expr, context, EMPTY_INPUT, active)
            for name, expr in invocation.input
        }
    except EvaluationError as exc:
        return InvocationStart(invocation.id, state, chart_name, version, None, str(exc))
    return InvocationStart(invocation.id, state, chart_name, version, MappingProxyType(values))


def _chosen(invocation: Invocation, context: Mapping[str, Any], active: frozenset[int]) -> str:
    """The chart `chart: {by, cases}` chooses; `EvaluationError` when `by` fails or its
    value has no case (no child starts: the parent gets `error.invoke.<id>`)."""
    choice = invocation.choice
    assert choice is not None
    role = f"chart choice of invoke '{invocation.id}'"
    value = computed_value(role, choice.by, context, EMPTY_INPUT, active)
    chosen = choice.chart_for(value)
    if chosen is None:
        known = ", ".join(repr(case.value) for case in choice.cases)
        raise EvaluationError(role, choice.by, f"its value has no case (cases: {known})")
    return chosen

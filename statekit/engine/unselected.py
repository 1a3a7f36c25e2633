"""Classifying an event that selected no transition (rule 6 of `statekit.engine.step`;
rule 4 when the chart is final): an `already` entry, the first guard that failed, the
most specific `reject` entry, the final chart, or `UNDEFINED_TRANSITION`. The static
analysis asks `classify_unselected` so that it classifies each (configuration, event)
exactly as a step does.
"""

from __future__ import annotations

import typing

from statekit.compiler import scxml_procedures
from statekit.engine.macrostep_run import FailedGuard
from statekit.engine.result import TERMINAL_STATE, UNDEFINED_TRANSITION, Result, Status
from statekit.engine.state import State
from statekit.engine.tables import Configuration, Tables

REJECTED = Status.REJECTED


def verdict(tables: Tables, config: Configuration, event: str) -> tuple[bool, str | None, int]:
    """The static part of classifying an event that selected nothing: whether an
    `already` entry applies, and the most specific `reject` reason with its state."""
    cached = config.cache.verdicts.get(event)
    if cached is not None:
        return cached
    candidates = config.final_states if config.final else (0, *config.ordered)
    already, reason, source = scxml_procedures.static_classification(
        tables.states, candidates, event
    )
    result = (already is not None, reason, -1 if source is None else source)
    config.cache.verdicts[event] = result
    return result


Basis = typing.Literal["already", "guard", "reject", "terminal", "undefined"]
"""Which rule of the classification decided: an `already` entry, a failing guard,
a `reject` entry, the final chart, or none (UNDEFINED_TRANSITION)."""


def classify_unselected(
    tables: Tables, config: Configuration, event: str, failed: FailedGuard | None
) -> tuple[Status, str | None, Basis]:
    """How an event that selected nothing in `config` is classified (rule 6 of the
    module docstring; rule 4 when the chart is final): (status, reason, basis).

    `failed` is the first guard that failed during selection (None when the
    chart is final: nothing is selected then). The static analysis uses this
    to classify each (configuration, event) exactly as `step` does.
    """
    already, reason, _source = verdict(tables, config, event)
    if already:
        return Status.ALREADY_APPLIED, None, "already"
    if failed is not None:
        return REJECTED, failed[0].reason, "guard"
    if reason is not None:
        return REJECTED, reason, "reject"
    if config.final:
        return REJECTED, TERMINAL_STATE, "terminal"
    return REJECTED, UNDEFINED_TRANSITION, "undefined"


def unselected(
    tables: Tables,
    state: State,
    event: str,
    event_id: str | None,
    failed: FailedGuard | None,
) -> Result:
    """The result of an event that selected nothing in `state` (`classify_unselected`),
    its message naming the guard, the `reject` entry or the states."""
    config = state._config
    status, reason, basis = classify_unselected(tables, config, event, failed)
    if basis == "already":
        return Result(status, None, state, event, event_id)
    if basis == "guard":
        assert failed is not None
        check, transition = failed
        what = f"guard '{check.name}'" if check.name else "condition"
        where = tables.states[transition.source].path
        message = f"{what} of {event} from '{where}' failed: {check.expression.source}"
    elif basis == "reject":
        source = verdict(tables, config, event)[2]
        message = f"'{tables.states[source].path or tables.chart.name}' rejects {event}"
    elif basis == "terminal":
        message = f"the chart is final ({', '.join(state.leaves)}); {event} does not apply"
    else:
        message = f"no transition for {event} in {', '.join(state.leaves)}"
    return Result(status, reason, state, event, event_id, message=message)

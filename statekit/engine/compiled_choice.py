"""The selection of an event that reads data, compiled per (configuration, event).

When the memo of data-free macrosteps (`statekit.engine.memo`) cannot answer an
event (a guard reads the context, the payload or the clock), `step` selects
its transitions with SCXML's selectTransitions (`selection.select_transitions`)
on every event. In the common case where one atomic state (with its ancestors)
has candidates for the event (every event of a flat chart), that selection is
"the first candidate, in document order, whose guards all hold", with nothing
to conflict with: `compiled_choice` turns it into one function over the
candidates' own guard evaluators, built once per configuration and event
(cached in `config.cache.choices`); `step` then runs the compiled macrostep of
the transition it chose (`statekit.engine.compiled_macrostep`) or, when there
is none, the general loop given that selection. Anything else (candidates in
several regions, which conflict resolution must see) is `NOT_COMPILED`.

The choice returns what `select_transitions` returns: the selected transition
ids and the first guard that failed on the way (the classification's reason
when nothing is selected), and raises the same `EvaluationError` for a guard
that raises (`evaluation.first_failing_guard` words it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from statekit.compiler.ir import GuardCheck, Transition
from statekit.engine.evaluation import first_failing_guard
from statekit.engine.macrostep_run import FailedGuard
from statekit.engine.selection import event_entry
from statekit.engine.tables import Configuration, Tables

Selection = tuple[tuple[int, ...], FailedGuard | None]
Choice = Callable[[Mapping[str, Any], Mapping[str, Any], frozenset[int]], Selection]
"""(context, payload, active state ids) -> the selection, as `select_transitions`'."""

NOT_COMPILED = False
"""What the cache holds for an event whose selection is left to `select_transitions`."""

_NOTHING: Selection = ((), None)


def compiled_choice(tables: Tables, config: Configuration, event: str) -> Choice | bool:
    """The compiled selection of `event` in `config`, or `NOT_COMPILED` (cached per
    configuration in `config.cache.choices`)."""
    found = config.cache.choices.get(event)
    if found is None:
        found = config.cache.choices[event] = _compile(tables, config, event)
    return found


def _compile(tables: Tables, config: Configuration, event: str) -> Choice | bool:
    entry = event_entry(tables, config, event)
    if entry.fixed is not None or len(entry.chains) != 1:
        return NOT_COMPILED  # guard-free (the memo's), or regions that may conflict
    candidates = entry.chains[0]
    if len(candidates) == 1 and len(candidates[0].guards) == 1:
        return _one_guard(candidates[0], candidates[0].guards[0])
    return _in_order(candidates)


def _one_guard(transition: Transition, check: GuardCheck) -> Choice:
    """One candidate with one guard (a flat chart's usual transition): its evaluator
    called directly, the selection and the failure made once."""
    evaluate = check.expression.evaluate
    chosen: Selection = ((transition.id,), None)
    failed: Selection = ((), (check, transition))
    guards = (check,)

    def choose(
        context: Mapping[str, Any], payload: Mapping[str, Any], active: frozenset[int]
    ) -> Selection:
        try:
            holds = evaluate(context, payload, active)
        except Exception:  # the one guard evaluator words it, evaluating it again
            first_failing_guard(guards, context, payload, active)  # (pure: raises again)
            raise
        return chosen if holds else failed

    return choose


def _in_order(candidates: tuple[Transition, ...]) -> Choice:
    """Any candidates: the first whose guards all hold, in document order."""
    steps = tuple(((t.id,), t.guards, t) for t in candidates)

    def choose(
        context: Mapping[str, Any], payload: Mapping[str, Any], active: frozenset[int]
    ) -> Selection:
        first_failure: FailedGuard | None = None
        for selected, guards, transition in steps:
            if guards:
                failing = first_failing_guard(guards, context, payload, active)
                if failing is not None:
                    if first_failure is None:
                        first_failure = (failing, transition)
                    continue
            return selected, first_failure
        return ((), first_failure) if first_failure is not None else _NOTHING

    return choose

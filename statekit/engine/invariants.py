"""Invariants checked after every applied macrostep (and when a state is loaded).

State-form invariants depend only on the configuration, so their verdict is
cached per configuration; expression invariants (`assert:`) are evaluated on
the context and the active states, with no event in scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.ir import ExpressionInvariant
from statekit.engine.effects import EvaluationError
from statekit.engine.tables import EMPTY, Configuration, Tables


def _holds(inv: ExpressionInvariant, context: Mapping[str, Any], active: frozenset[int]) -> bool:
    try:
        return bool(inv.expression.evaluate(context, EMPTY, active))
    except Exception as exc:
        role = f"invariant '{inv.name}'"
        raise EvaluationError.from_exception(role, inv.expression, exc) from exc


def broken_invariant(
    tables: Tables, config: Configuration, context: Mapping[str, Any]
) -> str | None:
    """The first invariant in declaration order that does not hold, or None.

    Raises `EvaluationError` when an assertion cannot be evaluated.
    """
    broken = tables.broken_state_invariants(config)
    active = config.ids
    if not broken:
        for inv in tables.expression_invariants:
            try:  # inlined `_holds`: this runs after every applied event
                if not inv.expression.evaluate(context, EMPTY, active):
                    return inv.name
            except Exception as exc:
                role = f"invariant '{inv.name}'"
                raise EvaluationError.from_exception(role, inv.expression, exc) from exc
        return None
    for any_inv in tables.chart.invariants:
        if isinstance(any_inv, ExpressionInvariant):
            if not _holds(any_inv, context, active):
                return any_inv.name
        elif any_inv.name in broken:
            return any_inv.name
    return None

"""Invariants checked after every applied macrostep (and when a state is loaded).

State-form invariants depend only on the configuration, so their verdict is
cached per configuration; expression invariants (`assert:`) are evaluated on
the context and the active states, with no event in scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.invariant_ir import ExpressionInvariant
from statekit.engine.evaluation import first_broken_assertion, invariant_holds
from statekit.engine.tables import Configuration, Tables


def broken_invariant(
    tables: Tables, config: Configuration, context: Mapping[str, Any]
) -> str | None:
    """The first invariant in declaration order that does not hold, or None.

    Raises `EvaluationError` when an assertion cannot be evaluated.
    """
    broken = tables.broken_state_invariants(config)
    active = config.ids
    if not broken:
        return first_broken_assertion(tables.expression_invariants, context, active)
    for any_inv in tables.chart.invariants:
        if isinstance(any_inv, ExpressionInvariant):
            if not invariant_holds(any_inv, context, active):
                return any_inv.name
        elif any_inv.name in broken:
            return any_inv.name
    return None

"""unused-guard: a declared guard that no transition uses.

Failing::

    guards:
      has_budget: {if: ctx.attempt < ctx.max_attempts, else: BUDGET_EXHAUSTED}
    states:
      failed: {on: {RETRY: running}}

Passing::

    states:
      failed: {on: {RETRY: {to: running, guard: has_budget}}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart

SLUG = "unused-guard"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per declared guard that no transition names."""
    used = {g.name for t in chart.transitions for g in t.guards if g.name is not None}
    for name, guard in chart.guards.items():
        if name not in used:
            yield Diagnostic(
                SLUG, DEFAULT_SEVERITY, f"guard '{name}' is declared but never used", guard.span
            )

"""final-has-transitions: a final state declares transitions, which can never be taken as meant.

Reaching a final state completes its parent (and, at the top level, the whole
chart). Outgoing `on`, `always` or `done` transitions on a final state are a
modelling error: a final state answers late events with `already` or `reject`.

Failing::

    closed:
      final: true
      on: {REOPEN: open}

Passing::

    closed:
      final: true
      reject: {REOPEN: PAYMENT_CLOSED}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart, StateKind

SLUG = "final-has-transitions"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per transition declared on a final state."""
    for state in chart.states:
        if state.kind is not StateKind.FINAL:
            continue
        for tid in state.transitions:
            transition = chart.transitions[tid]
            label = transition.event or transition.kind.value
            yield Diagnostic(
                SLUG,
                DEFAULT_SEVERITY,
                f"final state '{state.path}' has a transition on {label}",
                transition.span,
                ("a final state answers late events with `already` or `reject`",),
            )

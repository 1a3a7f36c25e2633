"""shadowed-transition: an alternative that can never be taken because an earlier one always wins.

Alternatives for the same state and event (or the state's `always` or `done`
alternatives) are tried in order and the first whose guards pass is taken.
When an earlier alternative has no guard, the same guards, or only guards
that the later one has too, it passes whenever the later one would: the
later alternative is dead. Usually the order is wrong or a guard is missing.

Failing::

    TaskFailed:
      - to: failed                     # no guard: always taken
      - to: queued
        guard: retry_budget_left       # never reached

Passing::

    TaskFailed:
      - to: queued
        guard: retry_budget_left
      - to: failed                     # the fallback comes last
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import state_name, trigger
from statekit.analysis.static import shadowed_alternatives
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart

SLUG = "shadowed-transition"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"

_WHY = {
    "unguarded": "has no guard",
    "duplicate": "has the same guards",
    "weaker": "has only guards that this one has too",
}


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per alternative that an earlier alternative always pre-empts."""
    for found in shadowed_alternatives(chart):
        t, by = chart.transitions[found.transition], chart.transitions[found.by]
        where = state_name(chart, t.source)
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"this alternative for {trigger(chart, t.id)} on '{where}' can never be taken: "
            f"the alternative before it (line {by.span.line}) {_WHY[found.why]}",
            t.span,
            ("put the more specific alternatives first, or remove this one",),
        )

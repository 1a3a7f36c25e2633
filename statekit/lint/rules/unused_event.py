"""unused-event: a declared event that no `on`, `already`, `reject` or `raise` mentions.

An unused declaration is usually a typo on the other side (`on: {STRAT: …}` is
reported as unknown-event) or a leftover. Events caught only by a `"*"` reject
count as unused: name them where they are rejected. The events an `invoke:`
declares (`done.invoke.<id>`, `error.invoke.<id>`) are not the author's
declarations: `invoke-unclassified` asks that they be classified.

Failing::

    events: {START: {}, STOP: {}}
    states:
      idle: {on: {START: running}}

Passing::

    events: {START: {}, STOP: {}}
    states:
      idle: {on: {START: running}, reject: {STOP: NOT_RUNNING}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.static import mentioned_events
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.compiler.model.addresses import ERROR_COMMUNICATION
from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION

SLUG = "unused-event"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


_DECLARED = (ERROR_EXECUTION, ERROR_COMMUNICATION)


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per declared event that is never mentioned."""
    used = mentioned_events(chart)
    implicit = {e for i in chart.invocations for e in (i.done_event, i.error_event)}
    for name, event in chart.events.items():
        # the events an invoke, on_evaluation_error and an address declare are not the author's
        if name not in used and name not in implicit and name not in _DECLARED:
            yield Diagnostic(
                SLUG, DEFAULT_SEVERITY, f"event '{name}' is declared but never used", event.span
            )

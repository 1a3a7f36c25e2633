"""transient-timer: an `after` timer that can never fire, because its state never stays active.

An `after` timer is armed when its state is entered and cancelled when the
state is exited. When every macrostep that enters the state also leaves it
(an `always` transition or a raised event moves on at once), no reachable
configuration has the state active: the timer is cancelled in the macrostep
that armed it, and its transitions can never be taken. Either the timer
belongs to a state that waits, or the transition that moves on needs a guard.
States that are never entered are `unreachable-state`'s business. Nothing is
reported when the exploration hit a bound (see `analysis-limit`).

Failing::

    events: {GO: {}}
    initial: idle
    states:
      idle: {on: {GO: checking}}
      checking:
        always: done                  # left in the macrostep that entered it
        after: {30s: {to: idle}}      # so this timer never fires
      done: {final: true}

Passing::

    events: {GO: {}}
    initial: idle
    states:
      idle: {on: {GO: checking}}
      checking:
        always: {to: done, if: "ctx.ready"}
        after: {30s: {to: idle}}
      done: {final: true}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import state_name
from statekit.analysis.witness import checked_trace, trace_notes
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart

SLUG = "transient-timer"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per timer whose state is entered but active in no reachable
    configuration."""
    explored = facts.exploration
    if not chart.timers or not explored.complete:
        return
    active: set[int] = set()
    for node in explored.nodes:
        active.update(node.config.ids)
    for timer in chart.timers:
        if timer.state in active or timer.state not in facts.reached_states:
            continue
        name = state_name(chart, timer.state)
        where, outcome = facts.reached_states[timer.state]
        trace = checked_trace(facts.replays, where, outcome)
        notes = (
            f"every macrostep that enters '{name}' leaves it again, so the timer is "
            "cancelled in the macrostep that armed it",
            *trace_notes(trace),
            f"move the timer to a state that waits, or guard the transition that leaves "
            f"'{name}' at once",
        )
        yield Diagnostic(
            SLUG,
            DEFAULT_SEVERITY,
            f"timer {timer.name} can never fire: '{name}' is never active in a reachable "
            "configuration",
            timer.span,
            notes,
            trace=trace,
        )

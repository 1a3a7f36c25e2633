"""order-dependent-answer: two events whose order changes only how one of them is answered.

When two events can arrive in either order (they come from different
producers, or from no declared one) and, from some reachable configuration,
"A then B" and "B then A" end in the same state (configuration, history,
context, armed timers, emitted messages) but answer an event differently
(applied in one order and rejected in the other, or rejected for another
reason), nothing is lost either way, but the sender of the event sees
another answer. It is worth knowing (a client may retry on one reason and
give up on another), rarely worth deciding: the rule is informational. An
entry under `races:` naming the pair records that the answer is expected
and silences it. A pair whose orders end in different states is
`undecided-race`'s.

There is one finding per pair, shown at the undecided configuration where
the orders differ (ties: the shortest path), with both orders' outcomes and
the path there. Like `undecided-race`, the rule checks charts that declare
`producers:` or `races:`.

Failing::

    producers: {worker: [Finished], user: [Closed]}
    initial: open
    states:
      open: {on: {Finished: closed, Closed: closed}}
      closed: {final: true, reject: {Finished: ALREADY_CLOSED, Closed: ALREADY_CLOSED}}

Passing::

    # ... the same chart, with the answer expected:
    races:
      finished_vs_closed:
        events: [Finished, Closed]
        decision: Either closes it; the later one is told ALREADY_CLOSED.
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.races import races_in
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.lint.rules.undecided_race import finding

SLUG = "order-dependent-answer"
DEFAULT_SEVERITY = Severity.INFO
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per undecided pair of class `info` (see the module docstring)."""
    if not chart.producers and not chart.races:
        return
    for race in races_in(facts.exploration).info:
        if not race.decided:
            yield finding(
                chart,
                facts,
                race,
                SLUG,
                DEFAULT_SEVERITY,
                "changes only how an event is answered",
            )

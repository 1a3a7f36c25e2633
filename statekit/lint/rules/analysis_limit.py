"""analysis-limit: the exploration hit a bound, so some properties are not proven.

The explorer stops at `--max-configurations` abstract states (configuration
plus history values; default 100,000), when it has grown the process's memory
by `--max-memory` MiB (default 512; a chart whose configurations explode,
such as twenty parallel regions that share events, stops there instead of running out of
memory), and enumerates at most 20 data-guard
decisions and 1,024 guard-outcome combinations per macrostep (an eventless
loop over a counter, for example). Past a bound, findings that claim
something exists (an invariant violation, an undefined pair, a conflict) are
still reported, but claims of absence are not checked: `unreachable-state`,
`dead-state`, `no-final-path` and `unreachable-transition` stay silent. An
error by default, because "not proven" is not "proven"; set it to `warning`
in the lint configuration to accept an incomplete analysis.

Failing::

    context: {n: integer}
    initial: counting
    states:
      counting:
        always: {if: ctx.n < 100, do: [{assign: {n: ctx.n + 1}}]}   # unbounded for the analysis

Passing::

    context: {n: integer}
    initial: counting
    states:
      counting:
        entry: [{assign: {n: 100}}]
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.exploration import Exploration, Limit
from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import leaves
from statekit.analysis.timers import event_span
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart

SLUG = "analysis-limit"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"

NOT_PROVEN = (
    "not proven: unreachable-state, dead-state, no-final-path and unreachable-transition "
    "were not checked; invariants and undefined pairs were checked only where explored"
)


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """At most one finding: which bounds the exploration of this chart hit."""
    found = finding(chart, facts.exploration)
    if found is not None:
        yield found


def finding(chart: CompiledChart, explored: Exploration) -> Diagnostic | None:
    """The finding for an exploration that hit a bound (None when it is complete);
    `statekit explain` and `paths` report it too."""
    if explored.complete:
        return None
    notes: list[str] = []
    span = None
    headline = ""
    branching: dict[str | None, list[Limit]] = {}
    for limit in explored.limits:
        if limit.kind in ("configurations", "memory", "loops"):
            headline = limit.message
            span = chart.span
        else:
            branching.setdefault(limit.event, []).append(limit)
    for event, limits in branching.items():
        what = f"event {event}" if event is not None else "the initial macrostep"
        first = limits[0].node
        where = (
            f" in {leaves(chart, explored.nodes[first].config)}"
            if first is not None and first >= 0
            else ""
        )
        more = f" (and {len(limits) - 1} more configuration(s))" if len(limits) > 1 else ""
        notes.append(f"not all data-guard outcomes of {what}{where}{more}: {limits[0].message}")
        if span is None:
            span = event_span(chart, event) if event is not None else chart.span
            headline = f"the data-guard outcomes of {what} were not all explored"
    assert span is not None
    if branching:
        notes.append(
            "an eventless loop or a raise cycle whose guards read data cannot be bounded "
            "statically; past the bound further data guards were assumed to fail"
        )
    notes.append(NOT_PROVEN)
    kinds = {limit.kind for limit in explored.limits}
    if "configurations" in kinds:
        notes.append("raise the bound: --max-configurations N")
    if "memory" in kinds:
        notes.append("raise the bound: --max-memory MiB (where memory allows)")
    return Diagnostic(
        SLUG,
        DEFAULT_SEVERITY,
        f"the analysis of '{chart.name}' is incomplete: {headline}",
        span,
        tuple(notes),
    )

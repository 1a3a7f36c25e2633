"""undefined-pair: a reachable configuration and declared event that nothing classifies.

In every reachable configuration each event the chart uses should have a
deliberate outcome: a transition, an `already` entry (ALREADY_APPLIED) or a
`reject` entry (REJECTED with a reason). Where none applies the engine
answers UNDEFINED_TRANSITION, which tells the caller nothing. Findings are
grouped by active atomic state and event (one example configuration each,
with a path to it). Events nothing mentions are `unused-event`'s business,
unless a `reject "*"` somewhere shows that the chart classifies every event.
Guards and `reject "*"` count as classifying; a final chart answers
TERMINAL_STATE, which is a classification too.

Failing::

    events: {PAY: {}, SHIP: {}, CANCEL: {}}
    initial: open
    states:
      open: {on: {PAY: paid, CANCEL: cancelled}, reject: {SHIP: NOT_PAID}}
      paid: {on: {SHIP: shipped}, already: [PAY]}      # CANCEL after PAY: undefined
      shipped: {final: true, reject: {"*": SHIPPED}}
      cancelled: {final: true, reject: {"*": CANCELLED}}

Passing::

    # ... the same chart, with CANCEL classified once paid:
      paid: {on: {SHIP: shipped}, already: [PAY], reject: {CANCEL: ALREADY_PAID}}
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.facts import ChartFacts
from statekit.analysis.report import leaves, path_notes
from statekit.analysis.static import mentioned_events
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import Configuration

SLUG = "undefined-pair"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "chart"


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per (atomic state, event) group of undefined pairs."""
    explored = facts.exploration
    wildcard = any(c.event == "*" for s in chart.states for c in s.reject + s.already)
    used = frozenset(chart.events) if wildcard else mentioned_events(chart)
    undefined: dict[str, dict[Configuration, int]] = {}
    containing: dict[int, set[Configuration]] = {}
    for node in explored.nodes:
        for s in node.config.atomic:
            containing.setdefault(s, set()).add(node.config)
        for outcome in node.outcomes or ():
            if outcome.basis == "undefined" and outcome.event in used:
                assert outcome.event is not None
                undefined.setdefault(outcome.event, {}).setdefault(node.config, node.id)
    findings: list[tuple[int, str, Diagnostic]] = []
    for event, where in undefined.items():
        for state, configs in _groups(where, containing):
            example = configs[0]
            node_id = where[example]
            total = len(containing[state])
            count = (
                f"{len(configs)} reachable configuration(s)"
                if len(configs) == total
                else f"{len(configs)} of the {total} reachable configurations with it active"
            )
            path = chart.states[state].path
            notes = (
                f"for example in {leaves(chart, example)}",
                *path_notes(explored, node_id),
                f"classify it: a transition on {event} from '{path}' or an ancestor, "
                f"`already: [{event}]` if its goal is already reached there, or "
                f"`reject: {{{event}: REASON}}`",
            )
            message = (
                f"event {event} is not classified in state '{path}': no transition, `already` "
                f"or `reject` covers it (UNDEFINED_TRANSITION in {count})"
            )
            findings.append(
                (
                    state,
                    event,
                    Diagnostic(SLUG, DEFAULT_SEVERITY, message, chart.states[state].span, notes),
                )
            )
    for _state, _event, diagnostic in sorted(findings, key=lambda f: (f[0], f[1])):
        yield diagnostic


def _groups(
    where: dict[Configuration, int], containing: dict[int, set[Configuration]]
) -> list[tuple[int, list[Configuration]]]:
    """Cover the undefined configurations of one event by atomic states: first states
    whose every reachable configuration is undefined (one entry on such a state
    classifies them all), most configurations first, then any state; document order
    breaks ties."""
    by_state: dict[int, list[Configuration]] = {}
    for config in where:
        for s in config.atomic:
            by_state.setdefault(s, []).append(config)
    order = sorted(
        by_state,
        key=lambda s: (len(by_state[s]) != len(containing[s]), -len(by_state[s]), s),
    )
    assigned: set[Configuration] = set()
    groups: list[tuple[int, list[Configuration]]] = []
    for s in order:
        members = [c for c in by_state[s] if c not in assigned]
        if members:
            assigned.update(members)
            groups.append((s, members))
    return groups

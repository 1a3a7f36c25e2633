"""shadowed-reject: a `reject` entry that is never the answer in any reachable configuration.

An event that fires nothing is answered, in this order, by an `already`
entry of an active state, the first failing guard's `else`, then the most
specific `reject` entry (the deepest active state, an exact name before
`"*"`), across all regions. A `reject` entry whose state is reachable but
that something else answers first in every reachable configuration where the
state is active is dead: its reason is never given, which usually means the
caller sees another region's reason than the one written here. The finding
says what pre-empts it (a transition, an `already`, a guard's `else`, a more
specific `reject`, the final chart), with an example configuration. An entry
whose reason is given anyway (everything that pre-empts it rejects with the
same reason) is not reported. Only a complete exploration proves it (see
`analysis-limit`).

Failing::

    parallel: true
    states:
      payment:
        initial: created
        states:
          created: {on: {PAY: paid}, reject: {SHIP: NOT_PAID}}   # never the answer
          paid: {}
      shipping:
        initial: waiting
        states:
          waiting:
            on: {SHIP: {to: sent, if: "active('payment.paid')", else: PAYMENT_MISSING}}
          sent: {}

Passing::

    # ... the same chart without the entry (the guard's `else` answers SHIP before
    # payment), or with the reason moved into that `else`.
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.analysis.exploration import Exploration
from statekit.analysis.facts import ChartFacts
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.report import leaves, state_name, transition_label
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import ClassifiedEvent, CompiledChart
from statekit.compiler.scxml_procedures import static_classification
from statekit.engine.result import Status
from statekit.engine.tables import Configuration

SLUG = "shadowed-reject"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"

SHOWN = 3
"""How many distinct pre-empting answers a finding names."""


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per `reject` entry of a reachable state that is never the answer."""
    explored = facts.exploration
    if not explored.complete:
        return
    # (state, entry event) → what answered instead, with a first configuration each
    answered: set[tuple[int, str]] = set()
    instead: dict[tuple[int, str], dict[str, Configuration]] = {}
    other_reason: set[tuple[int, str]] = set()
    entries = {s.id: _entries(s.reject) for s in chart.states if s.reject}
    if not entries:
        return
    # per configuration: the active states (and the root) with `reject` entries, and the
    # answers already weighed there; nodes that differ only in their data share
    # configurations and answers, so each (configuration, answer) is weighed once
    # (13,546 outcomes are 351 answers on the media player)
    seen_in: dict[Configuration, tuple[tuple[int, ...], set[_AnswerKey]]] = {}
    for node in explored.nodes:
        config = node.config
        seen = seen_in.get(config)
        if seen is None:
            holders = tuple(a for a in (0, *config.ordered) if a in entries)
            seen = seen_in[config] = (holders, set())
        holders, weighed = seen
        if not holders:  # nothing to answer or shadow here
            continue
        for outcome in node.outcomes or ():
            answer = _answer_key(outcome)
            if answer in weighed:
                continue
            weighed.add(answer)
            event = outcome.event
            assert event is not None
            source = _answering_entry(chart, config, event) if outcome.basis == "reject" else None
            if source is not None:
                answered.add(source)
            why: str | None = None
            for active in holders:
                exact, star = entries[active]
                entry = exact.get(event, star)
                if entry is None or (active, entry.event) == source:
                    continue
                if why is None:
                    why = _pre_emption(explored, config, outcome, source)
                instead.setdefault((active, entry.event), {}).setdefault(why, config)
                if outcome.status is not Status.REJECTED or outcome.reason != entry.reason:
                    other_reason.add((active, entry.event))
    for node_state in chart.states:
        for entry in node_state.reject:
            key = (node_state.id, entry.event)
            if key in answered or key not in other_reason:
                continue  # the answer somewhere, never active, or its reason given anyway
            yield _finding(chart, node_state.id, entry, instead[key])


def _entries(
    reject: tuple[ClassifiedEvent, ...],
) -> tuple[dict[str, ClassifiedEvent], ClassifiedEvent | None]:
    """A state's `reject` entries as `_entry_for` reads them: by exact event (the first
    of each), and the first `"*"` entry."""
    exact: dict[str, ClassifiedEvent] = {}
    for entry in reject:
        if entry.event != "*":
            exact.setdefault(entry.event, entry)
    return exact, next((e for e in reject if e.event == "*"), None)


def _entry_for(chart: CompiledChart, state: int, event: str) -> ClassifiedEvent | None:
    """The `reject` entry of `state` that would answer `event` (exact before `"*"`)."""
    entries = chart.states[state].reject
    exact = next((e for e in entries if e.event == event), None)
    return exact or next((e for e in entries if e.event == "*"), None)


def _answering_entry(
    chart: CompiledChart, config: Configuration, event: str
) -> tuple[int, str] | None:
    """The (state, entry event) of the `reject` entry that answered, as the engine picks it
    (`static_classification` over the active states; only the final states' own entries
    once the chart is final)."""
    candidates = config.final_states if config.final else (0, *config.ordered)
    _already, _reason, source = static_classification(chart.states, candidates, event)
    if source is None:
        return None
    entry = _entry_for(chart, source, event)
    assert entry is not None
    return source, entry.event


_AnswerKey = tuple[object, ...]


def _answer_key(outcome: MacrostepBranch) -> _AnswerKey:
    """Everything of an outcome that `check` and `_pre_emption` read (with the
    configuration): two outcomes with the same key weigh the same."""
    first = outcome.steps[0].transitions[:1] if outcome.steps else ()
    failed = outcome.failed
    guard = None if failed is None else (failed[0].name, failed[0].reason, failed[1].id)
    rejected = outcome.status is Status.REJECTED  # all `check` asks of the status
    return (outcome.event, outcome.basis, rejected, outcome.reason, first, guard)


def _pre_emption(
    explored: Exploration,
    config: Configuration,
    outcome: MacrostepBranch,
    source: tuple[int, str] | None,
) -> str:
    """What answered `outcome.event` instead, in words (reading only what `_answer_key`
    keys)."""
    chart = explored.chart
    event = outcome.event
    assert event is not None
    if outcome.fired or outcome.basis == "livelock":
        fired = outcome.steps[0].transitions if outcome.steps else ()
        what = "the transition " + "; ".join(
            transition_label(chart, t, line=False) for t in fired[:1]
        )
        return what if outcome.fired else what + " (LIVELOCK)"
    if outcome.basis == "already":
        candidates = config.final_states if config.final else (0, *config.ordered)
        state, _reason, _source = static_classification(chart.states, candidates, event)
        assert state is not None
        return f"`already: [{event}]` on '{state_name(chart, state)}' (ALREADY_APPLIED)"
    if outcome.basis == "guard":
        assert outcome.failed is not None
        check, transition = outcome.failed
        what = f"guard '{check.name}'" if check.name else "the condition"
        return (
            f"the `else` of {what} of {transition_label(chart, transition.id, line=False)} "
            f"(REJECTED {check.reason})"
        )
    if outcome.basis == "reject" and source is not None:
        state, entry = source
        return (
            f"the more specific `reject: {{{entry}: {outcome.reason}}}` on "
            f"'{state_name(chart, state)}'"
        )
    if outcome.basis == "terminal":
        return "the final chart (REJECTED TERMINAL_STATE)"
    return f"REJECTED {outcome.reason}"


def _finding(
    chart: CompiledChart, state: int, entry: ClassifiedEvent, instead: dict[str, Configuration]
) -> Diagnostic:
    reasons = sorted(instead)
    shown = reasons[:SHOWN]
    where = state_name(chart, state)
    event = "every event" if entry.event == "*" else entry.event
    by = shown[0] if len(reasons) == 1 else "one of: " + "; ".join(shown)
    if len(reasons) > SHOWN:
        by += f" (and {len(reasons) - SHOWN} more)"
    examples = (
        (f"for example in {leaves(chart, instead[shown[0]])}",)
        if len(reasons) == 1
        else tuple(f"{why}: for example in {leaves(chart, instead[why])}" for why in shown)
    )
    notes = (
        *examples,
        "remove the entry, or move its reason where the answer is given "
        "(the guard's `else`, the `reject` of the state that answers)",
    )
    return Diagnostic(
        SLUG,
        DEFAULT_SEVERITY,
        f"`reject: {{{entry.event}: {entry.reason}}}` on '{where}' is never the answer: "
        f"in every reachable configuration with '{where}' active, {event} is answered first "
        f"by {by}",
        entry.span,
        notes,
    )

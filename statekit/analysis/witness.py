"""Concrete payloads for a printed path, found and checked by replaying it through `Chart.send`.

The analysis decides which data-guard outcomes can hold together
(`statekit.analysis.feasibility`), over an abstract context; a path it prints
is made runnable here: `witness_payloads` searches, step by step and depth
first, for a payload of each event such that the real engine, from the
chart's initial state (with its declared defaults, or the start context a path
starts from: `TrackedNodes.start_context`), takes exactly the printed
step (its status, reason, fired transitions and configuration). Candidate
values of a field come from its declared type (enum values, both booleans,
null when nullable), from the literals the chart's expressions compare with
(each integer and its neighbours, each string, strings of each integer's
length and its neighbours', for `len`) and from the current context,
so a guard such as `event.amount > ctx.limit` is met by `ctx.limit + 1`. A
timer step is sent by its timer event's name, without a payload. A chart that
reads `now` gets a clock reading per step, never decreasing along the path
(`statekit.analysis.clock_readings`: kept in the payload under `@now_ms`).

A rejection leaves the state as it was, so a rejection no payload brings
about here (it needs context the path's other steps do not give, say a low
battery on a path that never lowers it) gets None and the search goes on
past it. The search is bounded (`SEND_BUDGET` sends per path); past the bound,
or at an applied step it cannot take, the remaining steps get None: printed
as assumptions, never as payloads that were not checked.

`statekit paths` and `races` search their paths whole (`witness_payloads`);
`PathReplays` is the same search for the shortest paths to an exploration's
abstract states, shared by `explain`, lint's counterexample traces
(`checked_trace`, `trace_notes`) and the coverage report's hints: lazy, cached
per abstract state (a state's path is its parent's replay plus one step) and
bounded in all (`REPLAYS_BUDGET`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statekit.analysis.clock_readings import (
    REPLAYED_INSTANCE,
    clock_advances,
    last_reading,
    reading_floor,
    send_step,
    start_reading,
    with_readings,
)
from statekit.analysis.exploration import Exploration
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.payload_candidates import Literals as Literals
from statekit.analysis.payload_candidates import Payload as Payload
from statekit.analysis.payload_candidates import candidates as candidates
from statekit.analysis.payload_candidates import chart_literals as chart_literals
from statekit.analysis.payload_candidates import event_payloads as event_payloads
from statekit.analysis.report import leaves, outcome_text
from statekit.compiler.diagnostics import TraceStep
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart, StartError
from statekit.engine.result import Result
from statekit.engine.state import State

SEND_BUDGET = 20_000
"""Sends one path's search may make before it settles for the prefix it took."""


class Expected:
    """What one printed step says the engine does (see `takes`)."""

    __slots__ = ("configuration", "context", "event", "reason", "status", "transitions")

    def __init__(
        self,
        event: str,
        status: str,
        reason: str | None,
        transitions: Sequence[int],
        configuration: str,
        context: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.event = event
        self.status = status
        self.reason = reason
        self.transitions = sorted(transitions)
        self.configuration = configuration
        self.context = tuple(context)
        """Context fields the step must leave with these values (the tracked ones)."""


def takes(result: Result, step: Expected) -> bool:
    """Whether `result` is the printed step: its classification, the transitions it
    fired and (when the step names them) the configuration it leads to and the values
    of the tracked context fields there."""
    if (result.status.value, result.reason) != (step.status, step.reason):
        return False
    fired = sorted(t.id for microstep in result.evidence for t in microstep.transitions)
    if fired != step.transitions:
        return False
    if step.configuration and step.configuration != configuration_text(result.state):
        return False
    context = result.state.context
    return all(
        name in context and (type(context[name]), context[name]) == (type(value), value)
        for name, value in step.context
    )


def configuration_text(state: State) -> str:
    """A state's configuration as paths print it: `{a, b.c}`."""
    return "{" + ", ".join(state.leaves) + "}"


class _Search:
    def __init__(
        self,
        chart: Chart,
        steps: Sequence[Expected],
        literals: Literals | None = None,
        budget: int = SEND_BUDGET,
    ) -> None:
        self.chart = chart
        self.ir = chart.ir
        self.steps = steps
        self.sends = 0
        self.budget = budget
        self.best: list[Payload | None] = []
        self.taken: list[Payload | None] = []
        self.failed: set[tuple[int, State]] = set()
        self.literals = chart_literals(self.ir) if literals is None else literals
        self.advances = clock_advances(self.ir)
        self.end: State | None = None

    def run(self, start: State | None = None) -> list[Payload | None] | None:
        if start is None:
            try:
                start = self.chart.start(
                    now_ms=start_reading(self.ir), instance_id=REPLAYED_INSTANCE
                )
            except StartError:
                return None
        return list(self.taken) if self._from(0, start) else None

    def _from(self, index: int, state: State) -> bool:
        if len(self.taken) > len(self.best):
            self.best = list(self.taken)
        if index == len(self.steps):
            self.end = state
            return True
        if (index, state) in self.failed or self.sends >= self.budget:
            return False
        step = self.steps[index]
        for payload in self._payloads(step.event, state):
            if self.sends >= self.budget:
                return False
            self.sends += 1
            result = send_step(self.chart, state, step.event, payload)
            if not takes(result, step):
                continue
            self.taken.append(payload)
            if self._from(index + 1, result.state):
                return True
            self.taken.pop()
        if step.status != "APPLIED" and self.sends < self.budget:
            self.taken.append(None)  # not brought about here: assumed (the state is unchanged)
            if self._from(index + 1, state):
                return True
            self.taken.pop()
        self.failed.add((index, state))
        return False

    def _payloads(self, event: str, state: State) -> Iterator[Payload]:
        payloads = event_payloads(self.ir, event, state.context, self.literals)
        floor = reading_floor(state, event, last_reading(self.taken))
        return with_readings(payloads, floor, self.advances)


def witness_payloads(
    ir: CompiledChart, steps: Sequence[Expected], start: Mapping[str, Any] | None = None
) -> list[Payload | None]:
    """A checked payload for each step (None from the first step the search could not
    take on: see the module docstring), replayed from the initial state of an instance
    started with `start` (`Chart.start(context)`; None: the declared defaults)."""
    chart = Chart(ir)
    try:
        state = chart.start(start or None, now_ms=start_reading(ir), instance_id=REPLAYED_INSTANCE)
    except StartError:
        return [None] * len(steps)
    return search_payloads(chart, steps, state).payloads


@dataclass(frozen=True, slots=True)
class PayloadSearch:
    """What one bounded search found: a payload per step (None: not brought about, see
    the module docstring), whether every step was taken or skipped as allowed, and the
    sends it made."""

    payloads: list[Payload | None]
    complete: bool
    sends: int


def search_payloads(
    chart: Chart, steps: Sequence[Expected], start: State | None = None
) -> PayloadSearch:
    """The search `witness_payloads` makes, from `start` (default: the chart's initial
    state with its declared defaults), within `SEND_BUDGET` sends."""
    search = _Search(chart, steps)
    found = search.run(start)
    taken: list[Payload | None] = list(found if found is not None else search.best)
    padded = taken + [None] * (len(steps) - len(taken))
    return PayloadSearch(padded, found is not None, search.sends)


STEP_BUDGET = 2_000
"""Sends one step's search from a replayed state may make: an answer of `explain`, or a
node's path extended by the step that first reached it (past it the node's whole path is
searched again, within `SEND_BUDGET`)."""


@dataclass(frozen=True, slots=True)
class NodeReplay:
    """The checked payloads of the evented steps of the shortest known path to a node
    (`Exploration.path`), and the state the replay ends in (None when a step is only
    assumed: no state to go on from)."""

    payloads: tuple[Payload | None, ...]
    state: State | None


def expected_step(exploration: Exploration, outcome: MacrostepBranch) -> Expected:
    """What the engine must do to take `outcome` (an evented outcome of the exploration)."""
    where = ""
    tracked: tuple[tuple[str, Any], ...] = ()
    if outcome.fired and outcome.target >= 0:
        where = leaves(exploration.chart, exploration.nodes[outcome.target].config)
        tracked = tuple(exploration.tracked_nodes.distinguishing(outcome.target).items())
    return Expected(
        outcome.event or "",
        outcome.status.value,
        outcome.reason,
        outcome.transitions(),
        where,
        tracked,
    )


REPLAYS_BUDGET = 100_000
"""Sends one `PathReplays` may make in all (about two seconds of the engine's steps):
past it every further path and answer is printed as assumed, so that a chart of many
configurations keeps `explain --format json` and lint within a bound."""


class PathReplays:
    """Checked payloads for the paths of one exploration, found on demand and cached per
    node: a node's path is its parent's, replayed, plus one step searched from the
    parent's replayed state (the whole path is searched again only when that step cannot
    be taken from there), within `REPLAYS_BUDGET` sends in all. `explain`, lint's
    counterexample traces and the coverage hints share one per exploration."""

    def __init__(self, exploration: Exploration, budget: int = REPLAYS_BUDGET) -> None:
        self.exploration = exploration
        self.budget = budget
        self.sends = 0
        """Sends made so far (`budget` bounds them)."""
        self.chart = Chart(exploration.chart)
        self.literals = chart_literals(exploration.chart)
        self.advances = clock_advances(exploration.chart)
        self._nodes: dict[int, NodeReplay] = {}
        self._answers: dict[tuple[int, MacrostepBranch], Payload | None] = {}
        self._starts: dict[tuple[tuple[str, object], ...], State | None] = {}

    def start(self, node: int = -1) -> State | None:
        """The initial state the path to `node` starts from: the chart's declared defaults,
        with the tracked fields whose start values the exploration varied set as that
        path's start (`TrackedNodes.start_context`); None: it cannot start."""
        context = {} if node < 0 else self.exploration.tracked_nodes.start_context(node)
        key = tuple(sorted(context.items(), key=lambda item: item[0]))
        if key not in self._starts:
            try:
                now = start_reading(self.exploration.chart)
                self._starts[key] = self.chart.start(
                    context or None, now_ms=now, instance_id=REPLAYED_INSTANCE
                )
            except StartError:
                self._starts[key] = None
        return self._starts[key]

    def node(self, node: int) -> NodeReplay:
        """The replay of the path to `node` (-1: before the initial macrostep)."""
        if node < 0:
            return NodeReplay((), self.start())
        chain: list[int] = []
        current = node
        while current >= 0 and current not in self._nodes:
            chain.append(current)
            current = self.exploration.nodes[current].parent
        for member in reversed(chain):
            self._nodes[member] = self._extend(member)
        return self._nodes[node]

    def _extend(self, node: int) -> NodeReplay:
        view = self.exploration.nodes[node]
        via = view.via
        if view.parent < 0:  # the initial macrostep: no event, no payload
            state = self.start(node)
            if state is None or configuration_text(state) != leaves(
                self.exploration.chart, view.config
            ):
                state = None
            return NodeReplay((), state)
        parent = self._nodes[view.parent]
        if via.event is None:  # defensive: only the initial macrostep has none
            return NodeReplay(parent.payloads, None)
        if parent.state is None or self.sends >= self.budget:  # assumed from here on
            return NodeReplay((*parent.payloads, None), None)
        found = self._one_step(parent.state, via, parent.payloads)
        if found is not None:
            payload, state = found
            return NodeReplay((*parent.payloads, payload), state)
        path = self.exploration.path(node)
        steps = [expected_step(self.exploration, o) for _p, o in path if o.event is not None]
        budget = min(SEND_BUDGET, self.budget - self.sends)
        search = _Search(self.chart, steps, self.literals, budget)
        whole = search.run(self.start(node))
        self.sends += search.sends
        if whole is not None:
            return NodeReplay(tuple(whole), search.end)
        best = tuple(search.best) + (None,) * (len(steps) - len(search.best))
        return NodeReplay(best, None)

    def _one_step(
        self, state: State, outcome: MacrostepBranch, before: Sequence[Payload | None]
    ) -> tuple[Payload, State] | None:
        step = expected_step(self.exploration, outcome)
        choices = event_payloads(self.exploration.chart, step.event, state.context, self.literals)
        floor = reading_floor(state, step.event, last_reading(before))
        choices = with_readings(choices, floor, self.advances)
        for payload in itertools.islice(choices, min(STEP_BUDGET, self.budget - self.sends)):
            self.sends += 1
            result = send_step(self.chart, state, step.event, payload)
            if takes(result, step):
                return payload, result.state
        return None

    def answer(self, node: int, outcome: MacrostepBranch) -> Payload | None:
        """A checked payload that makes the chart answer `outcome` (an outcome of `node`)
        after the replay of the path to `node`; None: not found within `STEP_BUDGET`."""
        key = (node, outcome)
        if key not in self._answers:
            replay = self.node(node)
            state = replay.state
            found = None if state is None else self._one_step(state, outcome, replay.payloads)
            self._answers[key] = None if found is None else found[0]
        return self._answers[key]

    def trace(self, node: int, then: MacrostepBranch | None = None) -> tuple[Payload | None, ...]:
        """The checked payloads of the path to `node` and of `then` when given, one per
        evented step."""
        payloads = self.node(node).payloads
        if then is None or then.event is None:
            return payloads
        return (*payloads, self.answer(node, then))


def payload_text(payload: Payload | None) -> str:
    """A step's payload as traces print it: `payload {"amount": 1}`, or the note that
    none was found and the step's outcomes are assumed."""
    if payload is None:
        return "payload: none found by replay (the outcomes below are assumed)"
    return "payload " + json.dumps(payload, ensure_ascii=False)


def checked_trace(
    replays: PathReplays, node: int, then: MacrostepBranch | None = None
) -> tuple[TraceStep, ...]:
    """The shortest known path to `node` (then `then`), each step with what the chart
    does, its checked payload (None: assumed) and the data-guard outcomes it assumed.
    The initial macrostep's "payload" is the context to start the instance with when
    the path starts from other values of tracked fields than the declared defaults
    (`TrackedNodes.start_context`; None: the defaults)."""
    exploration = replays.exploration
    chart = exploration.chart
    path = [o for _p, o in exploration.path(node)] if node >= 0 else []
    if then is not None:
        path.append(then)
    payloads = iter(replays.trace(node, then))
    start = exploration.tracked_nodes.start_context(node) if node >= 0 else {}
    return tuple(
        TraceStep(
            outcome.event,
            outcome_text(exploration, outcome),
            (_fields(start) if start else None)
            if outcome.event is None
            else _fields(next(payloads)),
            tuple(a.describe(chart) for a in outcome.assumptions),
        )
        for outcome in path
    )


def _fields(payload: Mapping[str, Any] | None) -> tuple[tuple[str, object], ...] | None:
    return None if payload is None else tuple(payload.items())


def trace_notes(trace: Sequence[TraceStep]) -> tuple[str, ...]:
    """A trace as diagnostic notes: each step's line, its checked payload (none printed
    for an event without fields, nor for the initial macrostep) or the note that it is
    assumed, and the data-guard outcomes it assumed."""
    lines = ["path from the initial configuration:"]
    number = 0
    for step in trace:
        if step.event is None:
            lines.append(f"  start {step.outcome}")
            if step.payload:  # the instance is created with this context
                start = json.dumps(dict(step.payload), ensure_ascii=False)
                lines.append(f"     start context {start}")
        else:
            number += 1
            lines.append(f"  {number}. {step.event} {step.outcome}")
            if step.payload is None or step.payload:
                payload = None if step.payload is None else dict(step.payload)
                lines.append("     " + payload_text(payload))
        lines.extend(f"     assuming {a}" for a in step.assuming)
    return tuple(lines)

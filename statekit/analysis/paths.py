"""`statekit paths`: event sequences that fire every transition and reach every rejection class.

Model-based test generation over the explored graph (like XState's graph
helpers, but with the static structure and eventless transitions included).
Targets are every selectable transition and every *rejection class*: an
event's non-APPLIED outcome, keyed by (event, status, reason, and what
decided it: the `reject` entry's state, the failing guard's transition, the
`already` entry's state). Each target has a shortest path from the initial
configuration (breadth-first); the paths are taken longest first, skipping
targets an earlier path already covers (a path covers what every step on it
fires or reaches), so that few sequences cover everything. Each step lists
the data-guard outcomes it takes (`assuming`) and a payload that makes the
chart take it (`payload`), found and checked by replaying the path through
`Chart.send` (`statekit.analysis.witness`); None where no payload was found
within the search's bound (the step's outcomes are then only assumed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from statekit.analysis.exploration import Exploration
from statekit.analysis.facts import outcomes, selected_transitions
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.report import leaves, state_name, transition_label
from statekit.analysis.tracked_context import shown_value
from statekit.analysis.witness import Expected, witness_payloads
from statekit.engine.unselected import verdict

RejectionClass = tuple[str, str, str | None, str]
"""(event, status, reason, decided by): e.g. ('PAY', 'REJECTED', 'PAID', "reject on 'paid'")."""


@dataclass(frozen=True, slots=True)
class PathStep:
    """One event of a test path (event None: entering the initial configuration)."""

    event: str | None
    assuming: tuple[str, ...]
    status: str
    reason: str | None
    configuration: str
    transitions: tuple[int, ...]
    payload: tuple[tuple[str, Any], ...] | None = None
    """The payload's fields (name, value) that replay this step; None: not found. For
    the initial step (event None), the context to start the instance with
    (`Chart.start(context)`): the tracked fields the path needs other than their
    defaults; None: the defaults."""
    tracked: tuple[tuple[str, Any], ...] = ()
    """The tracked context values that tell the node the step leads to (when it fired)
    from the others in its configuration (`TrackedNodes.distinguishing`): its replay must
    leave them so."""

    @property
    def payload_fields(self) -> dict[str, Any] | None:
        """The payload as a mapping, to pass to `Chart.send` (None: not found)."""
        return None if self.payload is None else dict(self.payload)


@dataclass(frozen=True, slots=True)
class EventPath:
    """An event sequence from the initial configuration and what it covers."""

    steps: tuple[PathStep, ...]
    transitions: tuple[int, ...]
    rejections: tuple[RejectionClass, ...]


@dataclass(frozen=True, slots=True)
class PathSuite:
    """The paths, and the coverage they reach."""

    chart: str
    complete: bool
    paths: tuple[EventPath, ...]
    transitions: tuple[int, ...]
    never_selected: tuple[int, ...]
    rejections: tuple[RejectionClass, ...]

    def to_json(self, exploration: Exploration) -> dict[str, Any]:
        """The machine-readable form (`--format json`)."""
        chart = exploration.chart

        def transition(t: int) -> dict[str, Any]:
            return {"id": t, "label": transition_label(chart, t)}

        return {
            "version": 1,
            "chart": self.chart,
            "complete": self.complete,
            "paths": [
                {
                    "steps": [
                        {
                            "event": s.event,
                            "assuming": list(s.assuming),
                            "status": s.status,
                            "reason": s.reason,
                            "configuration": s.configuration,
                            "transitions": [transition(t) for t in s.transitions],
                            "payload": s.payload_fields,
                        }
                        for s in path.steps
                    ],
                    "covers": {
                        "transitions": list(path.transitions),
                        "rejections": [_class_json(c) for c in path.rejections],
                    },
                }
                for path in self.paths
            ],
            "coverage": {
                "transitions": len(self.transitions),
                "transitions_total": len(chart.transitions),
                "never_selected": [transition(t) for t in self.never_selected],
                "rejection_classes": [_class_json(c) for c in self.rejections],
            },
        }


def _class_json(c: RejectionClass) -> dict[str, Any]:
    return {"event": c[0], "status": c[1], "reason": c[2], "decided_by": c[3]}


def rejection_class(
    exploration: Exploration, node: int, outcome: MacrostepBranch
) -> RejectionClass:
    """What a non-APPLIED outcome covers."""
    chart, tables = exploration.chart, exploration.tables
    config = exploration.nodes[node].config
    event = outcome.event or ""
    if outcome.basis == "guard" and outcome.failed is not None:
        check, transition = outcome.failed
        name = f"guard {check.name}" if check.name else "condition"
        by = f"{name} of {transition_label(chart, transition.id)}"
    elif outcome.basis == "reject":
        by = f"reject on '{state_name(chart, verdict(tables, config, event)[2])}'"
    elif outcome.basis == "already":
        holders = config.final_states if config.final else (0, *config.ordered)
        holder = next(
            (s for s in holders if any(e.event == event for e in chart.states[s].already)), 0
        )
        by = f"already on '{state_name(chart, holder)}'"
    else:
        by = outcome.basis
    return (event, outcome.status.value, outcome.reason, by)


def _step(exploration: Exploration, outcome: MacrostepBranch) -> PathStep:
    chart = exploration.chart
    tracked: tuple[tuple[str, Any], ...] = ()
    if outcome.fired and outcome.target >= 0:
        reached = exploration.nodes[outcome.target]
        where = leaves(chart, reached.config)
        tracked = tuple(exploration.tracked_nodes.distinguishing(reached.id).items())
    else:
        where = ""
    assuming = tuple(a.describe(chart) for a in outcome.assumptions)
    payload = None
    if outcome.event is None and outcome.target >= 0:
        start = exploration.tracked_nodes.start_context(outcome.target)
        if start:  # the initial step's "payload" is the context to start the instance with
            payload = tuple(start.items())
            shown = ", ".join(f"ctx.{k} = {shown_value(v)}" for k, v in start.items())
            assuming = (f"the instance starts with {shown}", *assuming)
    return PathStep(
        outcome.event,
        assuming,
        outcome.status.value,
        outcome.reason,
        where,
        outcome.transitions(),
        payload,
        tracked,
    )


def covering_paths(exploration: Exploration) -> PathSuite:
    """Paths that together fire every selectable transition and reach every rejection
    class found (see the module docstring)."""
    selected = selected_transitions(exploration)
    nodes = exploration.nodes
    available: dict[int, list[tuple[RejectionClass, MacrostepBranch]]] = {}
    classes: dict[RejectionClass, int] = {}
    for node, outcome in outcomes(exploration):
        if node >= 0 and not outcome.fired:
            found = rejection_class(exploration, node, outcome)
            available.setdefault(node, []).append((found, outcome))
            classes.setdefault(found, node)

    def pairs_to(node: int) -> list[tuple[int, MacrostepBranch]]:
        return exploration.path(node) if node >= 0 else []

    def length(witness: tuple[int, MacrostepBranch | None]) -> int:
        node = witness[0]
        return nodes[node].depth + 1 if node >= 0 else 0

    chosen: list[list[tuple[int, MacrostepBranch]]] = []
    covered_t: set[int] = set()
    for _t, (node, last) in sorted(selected.items(), key=lambda kv: (-length(kv[1]), kv[0])):
        assert last is not None
        if all(t in covered_t for t in last.transitions()):
            continue
        pairs = [*pairs_to(node), (node, last)] if node >= 0 else [(-1, last)]
        for _source, outcome in pairs:
            covered_t.update(outcome.transitions())
        chosen.append(pairs)

    covered_r: set[RejectionClass] = set()

    def weave(pairs: list[tuple[int, MacrostepBranch]]) -> EventPath:
        """The path's steps, with every not yet covered rejection class inserted where
        the path passes through a state that has it (a rejection changes nothing)."""
        steps: list[PathStep] = []
        fired: list[int] = []
        reached: list[RejectionClass] = []

        def rejections_at(node: int) -> None:
            for found, outcome in available.get(node, ()):
                if found not in covered_r:
                    covered_r.add(found)
                    reached.append(found)
                    steps.append(_step(exploration, outcome))

        for source, outcome in pairs:
            if source >= 0:
                rejections_at(source)
            steps.append(_step(exploration, outcome))
            fired.extend(t for t in outcome.transitions() if t not in fired)
        last = pairs[-1][1]
        if last.fired and last.target >= 0:
            rejections_at(last.target)
        return EventPath(tuple(steps), tuple(fired), tuple(reached))

    paths = [weave(pairs) for pairs in chosen]
    for found, node in classes.items():
        if found not in covered_r:
            paths.append(weave(pairs_to(node)))
    paths = [with_payloads(exploration, path) for path in paths]
    paths.sort(key=lambda p: (len(p.steps), [s.event or "" for s in p.steps]))
    chart = exploration.chart
    never = tuple(t.id for t in chart.transitions if t.id not in selected)
    return PathSuite(
        chart.name,
        exploration.complete,
        tuple(paths),
        tuple(sorted(covered_t)),
        never,
        tuple(classes),
    )


def with_payloads(exploration: Exploration, path: EventPath) -> EventPath:
    """`path` with each step's checked payload (`statekit.analysis.witness`)."""
    events = [s for s in path.steps if s.event is not None]
    expected = [
        Expected(s.event or "", s.status, s.reason, s.transitions, s.configuration, s.tracked)
        for s in events
    ]
    start = path.steps[0].payload_fields if path.steps and path.steps[0].event is None else None
    found = iter(witness_payloads(exploration.chart, expected, start))
    steps = []
    for step in path.steps:
        if step.event is None:
            steps.append(step)
            continue
        payload = next(found)
        fields = None if payload is None else tuple(payload.items())
        steps.append(replace(step, payload=fields))
    return replace(path, steps=tuple(steps))

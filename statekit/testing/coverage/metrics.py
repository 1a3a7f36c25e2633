"""The four coverage numbers of one chart, from its exploration and a `ChartRecord`.

- transition: declared transitions (`on`, `always`, `done`) fired by an applied
  macrostep at least once / all declared transitions;
- classification: the (configuration, event) pairs of `statekit explain` (history
  values merged) that were classified at least once / all reachable pairs;
- rejection: reason codes seen / the reason codes the chart can produce: each
  reason an explored rejection has (a `reject` entry, a guard's `else`,
  `UNDEFINED_TRANSITION`, `TERMINAL_STATE`, `LIVELOCK`), plus `UNKNOWN_EVENT`
  and `INVALID_PAYLOAD`, which every chart produces from its initial state;
- race: order-sensitive pairs of events found by `statekit.analysis.races`
  (classes `race` and `info`, one per pair) whose two orders were both delivered
  (one event right after the other from one configuration where the pair is
  order-sensitive) / all of them.

Every missing item carries the shortest event sequence from the initial state
that would cover it (`path`: None for a transition no reachable configuration
selects) and, in `payloads`, a payload for each of its events checked by
replaying the sequence through `Chart.send` (`witness.PathReplays`; None for an
event whose payload the bounded search did not find: its data-guard outcomes are
only assumed), and `start_context` when the sequence starts from an instance
created with other values of tracked context fields than the declared defaults.
A race's sequence leads to the configuration where both orders are to be
delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statekit.analysis.exploration import Exploration
from statekit.analysis.facts import outcomes, selected_transitions
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.report import transition_label
from statekit.analysis.witness import PathReplays
from statekit.compiler.ir import CompiledChart
from statekit.engine.result import INVALID_PAYLOAD, UNKNOWN_EVENT, Status
from statekit.testing.coverage.races import RaceTarget, races_of
from statekit.testing.coverage.recorder import ChartRecord

METRICS = ("transition", "classification", "rejection", "race")
"""The metric names, in report order (also the keys of `--statekit-cov-fail-under`)."""


@dataclass(frozen=True, slots=True)
class Metric:
    """One coverage number: `covered` of `total`, and what is missing (JSON objects)."""

    covered: int
    total: int
    missing: tuple[dict[str, Any], ...]

    @property
    def percent(self) -> float:
        """Covered share in percent (100 when there is nothing to cover)."""
        return 100.0 if self.total == 0 else 100.0 * self.covered / self.total

    def to_json(self) -> dict[str, Any]:
        """`{"covered": n, "total": m, "missing": [...]}`."""
        return {"covered": self.covered, "total": self.total, "missing": list(self.missing)}


@dataclass(frozen=True, slots=True)
class ChartCoverage:
    """The coverage of one chart; `untested` are the ids of transitions never fired,
    `unexercised` the atomic states of configurations with a pair never classified."""

    name: str
    file: str
    loaded: bool
    complete: bool
    transition: Metric
    classification: Metric
    rejection: Metric
    race: Metric
    untested: frozenset[int]
    unexercised: frozenset[int]
    ir: CompiledChart = field(compare=False, repr=False)

    def metric(self, name: str) -> Metric:
        """One metric by name (see `METRICS`)."""
        value: Metric = getattr(self, name)
        return value

    def to_json(self) -> dict[str, Any]:
        """The chart's entry in the JSON report."""
        out: dict[str, Any] = {"file": self.file, "loaded": self.loaded, "complete": self.complete}
        for name in METRICS:
            out[name] = self.metric(name).to_json()
        return out


def _events(exploration: Exploration, node: int, last: MacrostepBranch | None) -> list[str]:
    pairs = exploration.path(node) if node >= 0 else []
    out = [outcome.event for _source, outcome in pairs if outcome.event is not None]
    if last is not None and last.event is not None:
        out.append(last.event)
    return out


def _payloads(
    replays: PathReplays, node: int, last: MacrostepBranch | None
) -> list[dict[str, Any] | None]:
    """The checked payload of each event of `_events(...)` (None: only assumed)."""
    return list(replays.trace(node, last))


def _started(item: dict[str, Any], exploration: Exploration, node: int) -> dict[str, Any]:
    """`item` with `start_context` when its path starts from other values of tracked
    context fields than the declared defaults (`Chart.start(context)`)."""
    start = exploration.tracked_nodes.start_context(node) if node >= 0 else {}
    return {**item, "start_context": start} if start else item


def _first_outcome(exploration: Exploration, node: int, event: str) -> MacrostepBranch | None:
    return next((o for o in exploration.outcomes_of(node) or () if o.event == event), None)


def _names(chart: CompiledChart, ids: frozenset[int] | tuple[int, ...]) -> list[str]:
    return [chart.states[s].path for s in sorted(ids) if chart.states[s].path]


def measure(
    exploration: Exploration, record: ChartRecord | None, *, file: str | None = None
) -> ChartCoverage:
    """The coverage of `exploration.chart` by what `record` saw (None: never loaded)."""
    chart = exploration.chart
    fired = record.transitions if record else set()
    pairs = record.pairs if record else set()
    reasons = record.reasons if record else set()
    sequences = record.sequences if record else set()

    replays = PathReplays(exploration)

    selected = selected_transitions(exploration)
    missing_t: list[dict[str, Any]] = []
    untested: set[int] = set()
    for t in chart.transitions:
        if t.id in fired:
            continue
        witness = selected.get(t.id)
        path = None if witness is None else _events(exploration, witness[0], witness[1])
        payloads = None if witness is None else _payloads(replays, witness[0], witness[1])
        label = transition_label(chart, t.id)
        untested.add(t.id)
        item = {"id": t.id, "label": label, "line": t.span.line, "path": path}
        item["payloads"] = payloads
        missing_t.append(item if witness is None else _started(item, exploration, witness[0]))
    transition = Metric(
        len(chart.transitions) - len(missing_t), len(chart.transitions), tuple(missing_t)
    )

    first_node: dict[tuple[frozenset[int], str], int] = {}
    reason_at: dict[str, tuple[int, MacrostepBranch]] = {}
    for node, outcome in outcomes(exploration):
        if node < 0 or outcome.event is None:
            continue
        ids = exploration.nodes[node].config.ids
        first_node.setdefault((ids, outcome.event), node)
        if outcome.status is Status.REJECTED and outcome.reason is not None:
            reason_at.setdefault(outcome.reason, (node, outcome))
    missing_c = [
        _started(
            {
                "configuration": [
                    chart.states[s].path for s in exploration.nodes[node].config.atomic
                ],
                "event": event,
                "path": [*_events(exploration, node, None), event],
                "payloads": _payloads(replays, node, _first_outcome(exploration, node, event)),
            },
            exploration,
            node,
        )
        for (ids, event), node in first_node.items()
        if (ids, event) not in pairs
    ]
    unexercised = {
        s
        for (ids, event), node in first_node.items()
        if (ids, event) not in pairs
        for s in exploration.nodes[node].config.atomic
    }
    classification = Metric(len(first_node) - len(missing_c), len(first_node), tuple(missing_c))

    possible: dict[str, list[str]] = {UNKNOWN_EVENT: [], INVALID_PAYLOAD: []}
    for reason, (node, outcome) in reason_at.items():
        possible.setdefault(reason, _events(exploration, node, outcome))

    def _rejection_payloads(reason: str) -> list[dict[str, Any] | None]:
        found = reason_at.get(reason)
        return [] if found is None else _payloads(replays, found[0], found[1])

    missing_r = [
        _started(
            {"reason": reason, "path": path, "payloads": _rejection_payloads(reason)},
            exploration,
            reason_at[reason][0] if reason in reason_at else -1,
        )
        for reason, path in sorted(possible.items())
        if reason not in reasons
    ]
    for item in missing_r:
        if item["reason"] == UNKNOWN_EVENT:
            item["hint"] = "send an event the chart does not declare"
        elif item["reason"] == INVALID_PAYLOAD:
            item["hint"] = "send a declared event with a payload that does not match it"
    rejection = Metric(len(possible) - len(missing_r), len(possible), tuple(missing_r))

    race = _race_metric(exploration, races_of(exploration), sequences, replays)
    return ChartCoverage(
        name=chart.name,
        file=file if file is not None else chart.file,
        loaded=record is not None,
        complete=exploration.complete,
        transition=transition,
        classification=classification,
        rejection=rejection,
        race=race,
        untested=frozenset(untested),
        unexercised=frozenset(unexercised),
        ir=chart,
    )


def _race_metric(
    exploration: Exploration,
    races: tuple[RaceTarget, ...],
    sequences: set[tuple[frozenset[int], str, str]],
    replays: PathReplays,
) -> Metric:
    chart = exploration.chart
    missing = []
    for race in races:
        a, b = race.events
        tried = [
            config
            for config in (race.configuration, *race.elsewhere)
            if (config, a, b) in sequences and (config, b, a) in sequences
        ]
        untried = [
            f"{first} then {second}"
            for first, second in ((a, b), (b, a))
            if (race.configuration, first, second) not in sequences
        ]
        if not tried:
            item = {
                "events": [a, b],
                "configuration": _names(chart, race.configuration),
                "decided": race.decided,
                "class": race.race_class,
                "untried": untried,
                "path": list(race.path),
                "payloads": _payloads(replays, race.node, None),
            }
            missing.append(_started(item, exploration, race.node))
    return Metric(len(races) - len(missing), len(races), tuple(missing))

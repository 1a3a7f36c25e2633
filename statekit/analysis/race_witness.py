"""Concrete payloads for a reported race: the path to its configuration and each order.

A race is printed as two orders of a pair of events from one configuration,
each with the data-guard outcomes it assumed. `race_replays` makes each order
runnable: the events of the shortest known path to the configuration, then
the pair in that order, with a payload for each found and checked by
replaying them through `Chart.send` (`statekit.analysis.witness`): the path's
steps as the exploration took them, the first event of the pair answered as
printed, the second too, ending in the printed configuration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from statekit.analysis.exploration import Exploration
from statekit.analysis.races import OrderOutcome, Race
from statekit.analysis.report import leaves
from statekit.analysis.witness import (
    Expected,
    PathReplays,
    Payload,
    search_payloads,
    witness_payloads,
)


@dataclass(frozen=True, slots=True)
class Replay:
    """The events of one order's replay, from the start, each with its checked payload
    (None: the bounded search found none, and that step is only assumed)."""

    events: tuple[str, ...]
    payloads: tuple[Payload | None, ...]
    start: tuple[tuple[str, object], ...] = ()
    """The context to start the instance with (the tracked fields whose start values
    differ from the declared defaults; empty: the defaults)."""

    @property
    def complete(self) -> bool:
        """Whether every step has a checked payload."""
        return all(p is not None for p in self.payloads)

    def text(self) -> str:
        """`E1 {"n": 1}, A {}, B {"late": true}`, after `start context {...}:` when the
        instance starts with other values than the declared defaults (`(no payload found:
        assumed)` for a step whose payload the bounded search did not find)."""
        events = ", ".join(
            f"{event} "
            + ("(no payload found: assumed)" if p is None else json.dumps(p, ensure_ascii=False))
            for event, p in zip(self.events, self.payloads, strict=True)
        )
        if self.start:
            start = json.dumps(dict(self.start), ensure_ascii=False)
            return f"start context {start}: {events}"
        return events


def _prefix(exploration: Exploration, node: int) -> list[Expected]:
    chart = exploration.chart
    out = []
    for _source, outcome in exploration.path(node):
        if outcome.event is None:
            continue
        where = ""
        tracked: tuple[tuple[str, object], ...] = ()
        if outcome.fired and outcome.target >= 0:
            reached = exploration.nodes[outcome.target]
            where = leaves(chart, reached.config)
            tracked = tuple(exploration.tracked_nodes.distinguishing(reached.id).items())
        transitions = outcome.transitions()
        out.append(
            Expected(
                outcome.event, outcome.status.value, outcome.reason, transitions, where, tracked
            )
        )
    return out


def _order(order: OrderOutcome) -> list[Expected]:
    first, second = order.first, order.second
    end = "{" + ", ".join(order.configuration) + "}"
    return [
        Expected(first.event, first.status, first.reason, order.transitions[0], ""),
        Expected(second.event, second.status, second.reason, order.transitions[1], end),
    ]


def race_replays(
    exploration: Exploration,
    race: Race,
    replays: PathReplays | None = None,
    *,
    thorough: bool = True,
) -> tuple[Replay, Replay]:
    """A checked replay of each of the race's two shown orders (A then B first).

    The path to the race's configuration is the one `replays` (shared by every race of
    the exploration, cached per node) replayed; the two events are searched from where
    it ends. Only when they cannot be taken from there, and `thorough`, is the whole
    path searched again, its earlier payloads free to change. Lint is not thorough:
    on the subscription chart of tests/charts/domain without its decisions (22
    undecided pairs), the whole-path searches of the 6 orders that fail took 0.36 s of
    a 0.82 s lint (profiled); `statekit races` is."""
    replays = replays if replays is not None else PathReplays(exploration)
    prefix = _prefix(exploration, race.node)
    start = exploration.tracked_nodes.start_context(race.node)
    at = replays.node(race.node)
    out = []
    for order in race.orders:
        last = _order(order)
        steps = [*prefix, *last]
        found: list[Payload | None] | None = None
        if at.state is not None:
            tail = search_payloads(replays.chart, last, at.state)
            if tail.complete:
                found = [*at.payloads, *tail.payloads]
        if found is None and thorough:
            found = witness_payloads(exploration.chart, steps, start)
        if found is None:  # the path as replayed, the two events assumed
            found = [*at.payloads, None, None]
        out.append(Replay(tuple(s.event for s in steps), tuple(found), tuple(start.items())))
    return out[0], out[1]

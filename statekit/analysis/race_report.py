"""A chart's races as one report, and its JSON form (`statekit races --format json`).

The shape of `RaceReport`, `Race`, `OrderOutcome` and `Classification` is
stable and grows only by additions: the coverage report and `statekit races
--format json` read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statekit.analysis.exploration import Exploration, Limit
from statekit.analysis.race_records import INFO, RACE, OrderOutcome, Race, RaceOccurrence
from statekit.compiler.ir import CompiledChart, RaceDecision


@dataclass(frozen=True, slots=True)
class RaceReport:
    """Every pair of events of a chart whose order of arrival matters, one `Race` each,
    in breadth-first order of their shown configurations (pairs in declaration order
    within one), the `convergent` pairs (their orders end alike everywhere: listed,
    never reported) and the exploration they were found in.

    `complete` is False when the exploration hit a bound (`limits`): races past
    it are not found. `unmatched` are the `races:` entries that decide no race
    found (stale decisions).
    """

    chart: CompiledChart
    races: tuple[Race, ...]
    exploration: Exploration = field(repr=False)
    unmatched: tuple[RaceDecision, ...] = ()
    convergent: tuple[Race, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether the exploration was complete (no race can be missing)."""
        return self.exploration.complete

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The bounds the exploration hit."""
        return tuple(self.exploration.limits)

    @property
    def undecided(self) -> tuple[Race, ...]:
        """The races (of both reported classes) no `races:` entry decides."""
        return tuple(r for r in self.races if not r.decided)

    @property
    def divergent(self) -> tuple[Race, ...]:
        """The races of class `race`: their orders end in different states somewhere."""
        return tuple(r for r in self.races if r.race_class == RACE)

    @property
    def info(self) -> tuple[Race, ...]:
        """The races of class `info`: the same end state, another answer."""
        return tuple(r for r in self.races if r.race_class == INFO)

    def to_json(self, *, convergent: bool = False) -> list[dict[str, Any]]:
        """One object per pair (the form of `statekit races --format json`; the
        convergent pairs too when `convergent`): `events`, `producers`, `class`,
        `difference`, `configuration`, `path`, `configurations` (how many it occurs
        in), `elsewhere` (the others: `configuration`, `path`, `class`, `decided`,
        `decision`), `decided`, `decision` (`{name, text}` or null), `orders` (A then B
        first: `events`, `answers` (`{event, status, reason}` each), `configuration`,
        `assumptions`) and `assumptions`, plus `chart` and `file`."""
        races = self.races + self.convergent if convergent else self.races
        return [self.race_json(race) for race in races]

    def race_json(self, race: Race) -> dict[str, Any]:
        """One pair's object of `to_json`."""
        chart = self.chart
        return {
            "chart": chart.name,
            "file": chart.file,
            "events": list(race.events),
            "producers": list(race.producers),
            "class": race.race_class,
            "difference": race.difference,
            "configuration": list(race.configuration),
            "path": list(race.path),
            "configurations": race.occurrences,
            "elsewhere": [_occurrence_json(o) for o in race.elsewhere],
            "decided": race.decided,
            "decision": _decision_json(race.decision),
            "orders": [_order_json(chart, order) for order in race.orders],
            "assumptions": [a.describe(chart) for a in race.assumptions],
        }


def _decision_json(decision: RaceDecision | None) -> dict[str, str] | None:
    return None if decision is None else {"name": decision.name, "text": decision.decision}


def _occurrence_json(occurrence: RaceOccurrence) -> dict[str, Any]:
    return {
        "configuration": list(occurrence.configuration),
        "path": list(occurrence.path),
        "class": occurrence.race_class,
        "difference": occurrence.difference,
        "decided": occurrence.decision is not None,
        "decision": _decision_json(occurrence.decision),
    }


def _order_json(chart: CompiledChart, order: OrderOutcome) -> dict[str, Any]:
    return {
        "events": list(order.order),
        "answers": [
            {"event": c.event, "status": c.status, "reason": c.reason}
            for c in (order.first, order.second)
        ],
        "configuration": list(order.configuration),
        "assumptions": [a.describe(chart) for a in order.assumptions],
    }

"""The races race coverage counts: the order-sensitive event pairs of the analysis.

`races_of` reads them from `statekit.analysis.races` (the data behind
`statekit races`): one per pair of events of class `race` or `info` (convergent
pairs are not counted), with the configuration it is shown at and every other
configuration where it is order-sensitive; it is covered when the run delivered
both orders from one of those configurations, one event right after the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis import races
from statekit.analysis.exploration import Exploration


@dataclass(frozen=True, slots=True)
class RaceTarget:
    """A race to cover: both orders of `events` delivered from `configuration` (active
    state ids), reached by the events of `path` from the initial state."""

    events: tuple[str, str]
    configuration: frozenset[int]
    decided: bool
    path: tuple[str, ...]
    race_class: str = "race"
    elsewhere: tuple[frozenset[int], ...] = ()
    """The other configurations where the pair is order-sensitive (either covers it)."""
    node: int = -1
    """The exploration node `path` leads to (its replay gives the path's payloads)."""


def races_of(exploration: Exploration) -> tuple[RaceTarget, ...]:
    """The races of the explored chart, in the order `statekit races` lists them."""
    return tuple(
        RaceTarget(
            race.events,
            race.active,
            race.decided,
            race.path,
            race.race_class,
            tuple(o.active for o in race.elsewhere),
            race.node,
        )
        for race in races.races_of(exploration).races
    )

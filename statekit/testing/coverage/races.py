"""The races race coverage counts: the order-sensitive event pairs of the analysis.

`races_of` reads them from `statekit.analysis.races` (the data behind
`statekit races`): each is a pair of events and the configuration from which
both orders can be delivered; it is covered when the run delivered both orders
from that configuration, one event right after the other.
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


def races_of(exploration: Exploration) -> tuple[RaceTarget, ...]:
    """The races of the explored chart, in the order `statekit races` lists them."""
    return tuple(
        RaceTarget(race.events, race.active, race.decided, race.path)
        for race in races.races_of(exploration).races
    )

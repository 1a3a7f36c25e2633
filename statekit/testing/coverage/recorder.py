"""`Recorder`: the engine observer that remembers what a test run exercised, per chart.

For each chart (by digest: the same behaviour compiled from another file or text
counts as the same chart) it keeps the transitions fired by applied macrosteps,
the (configuration, event) pairs classified, the rejection reasons seen, and the
two-event sequences delivered one right after the other from one configuration
(for race coverage: "A then B from C"). A sequence is followed through the
state objects (`chart.send(r.state, ...)` after `r = chart.send(s, ...)`) and,
for the durable runner, through the instance ID (when the instance's state is the
one its previous event left). A chart made while it records (`loaded`, an engine
watcher) has a record too, empty until something is sent to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statekit.compiler.ir import CompiledChart
from statekit.engine.result import Result, Status
from statekit.engine.state import State
from statekit.engine.tables import TablesOwner

Sequence2 = tuple[frozenset[int], str, str]
"""(active state ids where the first event was sent, first event, second event)."""

_FOLLOWED = 4096
"""How many recent result states are remembered to follow sequences (oldest dropped)."""


@dataclass(slots=True)
class ChartRecord:
    """What the run exercised of one chart (`chart`: its IR, as first seen; `source`:
    the text it was compiled from, when the `Chart` had it)."""

    chart: CompiledChart
    source: str | None = None
    transitions: set[int] = field(default_factory=set)
    pairs: set[tuple[frozenset[int], str]] = field(default_factory=set)
    reasons: set[str] = field(default_factory=set)
    sequences: set[Sequence2] = field(default_factory=set)
    events: int = 0


class Recorder:
    """An observer (`statekit.engine.observers.Observer`) that fills `ChartRecord`s;
    with `only`, of the charts of those digests only (the others are not kept)."""

    def __init__(self, only: frozenset[str] | None = None) -> None:
        self.only = only
        self.charts: dict[str, ChartRecord] = {}
        self._after: dict[int, tuple[State, frozenset[int], str]] = {}
        self._instances: dict[tuple[str, str], tuple[State, frozenset[int], str]] = {}

    def _record(self, owner: TablesOwner) -> ChartRecord | None:
        tables = owner.tables
        record = self.charts.get(tables.digest)
        if record is None:
            if self.only is not None and tables.digest not in self.only:
                return None
            source = getattr(owner, "source", None)
            record = ChartRecord(tables.chart, source if isinstance(source, str) else None)
            self.charts[tables.digest] = record
        return record

    def loaded(self, owner: TablesOwner) -> None:
        """A chart was made (an engine watcher): it is measured, sent anything or not."""
        self._record(owner)

    def __call__(
        self, owner: TablesOwner, before: State | None, result: Result, instance: str | None
    ) -> None:
        record = self._record(owner)
        if record is None:
            return
        tables = owner.tables
        record.events += 1
        if result.status is Status.APPLIED:
            for microstep in result.evidence:
                record.transitions.update(t.id for t in microstep.transitions)
        elif result.reason is not None:
            record.reasons.add(result.reason)
        if before is None:  # the initial macrostep
            return
        ids = before._config.ids
        event = result.event
        record.pairs.add((ids, event))
        if instance is not None:
            key = (tables.digest, instance)
            previous = self._instances.get(key)
            # the instance's state must be the one its previous event left (another
            # test may reuse the instance ID in another store)
            if previous is not None and previous[0] == before:
                record.sequences.add((previous[1], previous[2], event))
            self._instances[key] = (result.state, ids, event)
            return
        earlier = self._after.get(id(before))
        if earlier is not None and earlier[0] is before:
            record.sequences.add((earlier[1], earlier[2], event))
        self._after[id(result.state)] = (result.state, ids, event)
        if len(self._after) > _FOLLOWED:
            del self._after[next(iter(self._after))]

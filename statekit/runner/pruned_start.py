"""Where the replay of an instance whose early events were thinned starts
(`statekit.runner.retention`): the snapshot at the sequence they were thinned through.

That snapshot must pass every check `snapshots.snapshot_state` makes (its text
against its stored sha256, the chart digest, the engine version, the state
loading into its chart); the thinned rows before it must be the whole prefix
(sequences 1..N, each either thinned or still whole), and a thinned row must keep
a whole payload hash. The replay then folds the events after the snapshot only;
a timer armed before the snapshot takes its arming sequence from its stored row,
and a fact recorded before it is found among the thinned rows (their type,
idempotency key and hash are kept).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet
from statekit.runner.history import KeyLookup, Replayed
from statekit.runner.snapshots import snapshot_state
from statekit.runner.store.retention_queries import THINNED
from statekit.runner.store.rows import EventRow, RecordedKey, SnapshotRow, TimerRow

_WHOLE_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class PrunedStart:
    """The start of a replay from the snapshot at `through` (`state` None: it cannot
    start; `problems` say why, and what is wrong with the thinned prefix)."""

    through: int
    state: State | None
    problems: tuple[str, ...]

    def replayed(self, timers: Sequence[TimerRow]) -> Replayed:
        """The fold's start: the snapshot's state at `through`, with the arming sequence of
        every stored timer armed at or before it."""
        armed = {
            (t.timer_id, t.generation): t.sequence
            for t in timers
            if type(t.sequence) is int and t.sequence <= self.through
        }
        return Replayed(state=self.state, version=self.through, armed_at=armed)


def is_thinned(event: EventRow) -> bool:
    """Whether retention thinned this event row (payload and evidence emptied)."""
    return event.payload == THINNED


def pruned_start(
    charts: ChartSet, through: int, prefix: Sequence[EventRow], snapshots: Sequence[SnapshotRow]
) -> PrunedStart:
    """The start of the replay of an instance thinned through `through`; `prefix`: its
    event rows at or before `through`, in order."""
    problems: list[str] = []
    sequences = [e.sequence for e in prefix]
    if sequences != list(range(1, through + 1)):
        problems.append(
            f"history: events 1..{through} were pruned to the snapshot at {through}, but the "
            f"store has {len(sequences)} row(s) of them, not in that order or not all"
        )
    for event in prefix:
        where = f"event #{event.sequence} ({event.event_id})"
        if is_thinned(event) != (event.evidence == THINNED):
            problems.append(f"{where}: thinned in part (its payload or its evidence is empty)")
        elif is_thinned(event) and not _WHOLE_HASH.fullmatch(str(event.payload_sha256)):
            problems.append(f"{where}: thinned without its whole payload hash")
    shot = next((s for s in snapshots if s.through_sequence == through), None)
    if shot is None:
        problems.append(
            f"snapshot at {through}: events 1..{through} were pruned to it and it is not "
            "stored; the history cannot be replayed"
        )
        return PrunedStart(through, None, tuple(problems))
    checked = snapshot_state(charts, shot)
    if checked.state is None:
        problems.append(
            f"{checked.refused}; events 1..{through} were pruned to it, so the history "
            "cannot be replayed"
        )
    return PrunedStart(through, checked.state, tuple(problems))


def thinned_keys(prefix: Sequence[EventRow]) -> KeyLookup:
    """The facts recorded at or before the snapshot, from the kept columns of its rows."""
    found = {
        (e.type, e.idempotency_key): RecordedKey(
            sequence=e.sequence, event_id=e.event_id, payload_sha256=e.payload_sha256
        )
        for e in prefix
        if e.idempotency_key is not None and e.status != "REJECTED"
    }
    return lambda event_type, key: found.get((event_type, key))

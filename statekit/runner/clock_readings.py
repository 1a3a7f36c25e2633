"""The last clock reading an instance recorded: what a step of it must not go back from.

The analysis reads `now` as growing per instance (timers' due times come from it), so
`statekit run` checks the reading it gives its steps against this one before it applies
(`_Run._late` in `statekit.cli.runner_commands`). It is a read of its own, outside the
step's write transaction: the runner's write path does not hold the reading (the
instance row stores only its start's, `start_clock_ms`), see docs/semantics.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.runner.retrying import healing
from statekit.runner.runner import Runner


@dataclass(frozen=True, slots=True)
class LastReading:
    """An instance's last recorded clock reading, in epoch milliseconds."""

    instance_id: str
    clock_ms: int


@healing()
def last_reading(runner: Runner, instance_id: str) -> LastReading | None:
    """The clock reading of `instance_id`'s last recorded event (its start's when no event
    records one); None when the instance is not stored or recorded no reading. Read again
    after a lost connection, as the runner's own reads are (`statekit.runner.retrying`)."""
    store = runner.store
    with store.read():
        row = store.instance(instance_id)
        if row is None:
            return None
        clock_ms = store.last_clock_ms(instance_id)
    if clock_ms is None:
        clock_ms = row.start_clock_ms
    return None if clock_ms is None else LastReading(instance_id, clock_ms)

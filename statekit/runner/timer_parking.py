"""Parking a timer in a write transaction of its own (`Runner.park_timer`, the worker's
loop guard): the write side of `statekit.runner.loop_parking`, apart from it so that
replay (`runner.history`), which reads that module, does not depend on the write path."""

from __future__ import annotations

from dataclasses import replace

from statekit.runner.errors import UnknownInstanceError
from statekit.runner.outcome import Outcome
from statekit.runner.timers import timer_event_id
from statekit.runner.write_stages import WriteStages


def park_timer(
    work: WriteStages, instance_id: str, timer_id: str, generation: int, now_ms: int
) -> Outcome:
    """Park the timer `timer_id` armed at `generation` on `instance_id` in a write
    transaction of its own: REJECTED `TIMER_LOOP` and recorded when it is still armed
    so, else REJECTED `STALE_TIMER` (delivered, cancelled or parked meanwhile) and
    nothing written; UnknownInstanceError when the instance is gone."""
    event_id = timer_event_id(timer_id, generation)
    with work.store.write():
        row = work.read_locked(instance_id, event_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        tx = work.begin(row, now_ms)
        outcome = tx.park(timer_id, generation)
        work.finish(tx)
    return replace(outcome, instance_id=instance_id)

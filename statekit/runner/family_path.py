"""Which runners take the family path, and `apply_in_family`: `Runner.apply` as a family
step (`runner.family_step`) in one write transaction.

A runner takes it when its chart composes (`family_charts.composes`: it invokes a chart or
sends to another instance) or when it was given other charts (`Runner(charts=...)`: it
may be fed a family's member). A runner of one chart that composes nothing takes the
single-instance path as before: no new statement and no new work per event.
"""

from __future__ import annotations

from statekit.runner.decision_inputs import Command
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.family_ids import CHILD_ENDED
from statekit.runner.family_step import (
    FAMILY_STEP_BOUND,
    MAX_DELIVERIES,
    BoundReached,
    FamilyStep,
)
from statekit.runner.outcome import Outcome
from statekit.runner.store.family_rows import ACTIVE
from statekit.runner.store.hold_points import LOCKED
from statekit.runner.write_stages import WriteStages


def apply_in_family(path: WriteStages, instance_id: str, command: Command) -> Outcome:
    """`command` on `instance_id` as a family step, in one write transaction (the root
    of its family locked first); past `MAX_DELIVERIES` nothing of it is kept and the
    command is recorded as REJECTED (`FAMILY_STEP_BOUND`) in a transaction of its own."""
    store = path.store
    now_ms = path.now_ms()
    try:
        with store.write():
            step = FamilyStep(path, instance_id, command.event_id, now_ms)
            step.lock_root(instance_id)
            row = path.read_locked(instance_id, command.event_id)
            if row is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            store.reach(LOCKED)
            tx = step.begin(row)
            status = step.status_of(instance_id)
            if status not in (None, ACTIVE) and row.recorded is None:
                outcome = tx.refuse(command, CHILD_ENDED, f"instance {instance_id!r} is {status}")
            else:
                outcome = step.apply(tx, command, row)
            path.answer = outcome
            step.write()
        return outcome
    except BoundReached:
        pass
    with store.write():
        step = FamilyStep(path, instance_id, command.event_id, now_ms)
        step.lock_root(instance_id)
        row = path.read_locked(instance_id, command.event_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        tx = step.begin(row)
        outcome = tx.refuse(
            command,
            FAMILY_STEP_BOUND,
            f"the family step made {MAX_DELIVERIES} deliveries between its members and had "
            "more to make (a ping-pong between parent and child?): nothing of it was kept",
        )
        path.answer = outcome
        step.write()
    return outcome

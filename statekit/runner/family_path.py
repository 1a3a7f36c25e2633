"""`apply_in_family`: `Runner.apply` as a family step (`runner.family_step`) in one write
transaction, for a runner that takes the family path.

A runner takes it when its chart composes (`family_charts.composes`: it invokes a chart
or sends to another instance) or when it was given other charts (`Runner(charts=...)`:
it may be fed a family's member). A runner of one chart that composes nothing takes the
single-instance path as before: no new statement and no new work per event.
"""

from __future__ import annotations

from statekit.engine.family import FAMILY_BOUND
from statekit.runner.decision_inputs import Command
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.family_step import MAX_DELIVERIES, BoundReached, FamilyStep
from statekit.runner.outcome import Outcome
from statekit.runner.store.hold_points import LOCKED
from statekit.runner.write_stages import WriteStages


def apply_in_family(path: WriteStages, instance_id: str, command: Command) -> Outcome:
    """`command` on `instance_id` as a family step, in one write transaction (the root
    of its family locked first); past `MAX_DELIVERIES` nothing of it is kept and the
    command is recorded as REJECTED (`FAMILY_BOUND`) in a transaction of its own."""
    store = path.store
    now_ms = path.now_ms()
    try:
        with store.write():
            step = FamilyStep(path, now_ms)
            step.lock_root(instance_id)
            row = path.read_locked(instance_id, command.event_id)
            if row is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            store.reach(LOCKED)
            outcome = step.apply(step.begin(row), command, row)
            path.answer = outcome
            step.write()
        return outcome
    except BoundReached:
        pass
    with store.write():  # nothing of the family step was kept: the event is refused
        step = FamilyStep(path, now_ms)
        step.lock_root(instance_id)
        row = path.read_locked(instance_id, command.event_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        outcome = step.begin(row).refuse(
            command,
            FAMILY_BOUND,
            f"the family step made {MAX_DELIVERIES} deliveries between its members and had "
            "more to make (a ping-pong between parent and child?): nothing of it was kept",
        )
        path.answer = outcome
        step.write()
    return outcome

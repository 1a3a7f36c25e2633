"""`Runner.apply`, `create` and `fire_due` as family steps (`runner.family_step`), each in
one write transaction, for a runner that takes the family path.

A runner takes it when its chart or one it was given (`Runner(charts=...)`: it may be
fed a family's member) composes (`family_charts.composes`: invokes a chart or sends to
another instance). A runner whose charts compose nothing takes the single-instance path
as before: no new statement and no new work per event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import START_EVENT
from statekit.engine.family import FAMILY_BOUND
from statekit.runner.decision_inputs import Command
from statekit.runner.errors import FamilyBoundError, UnknownInstanceError
from statekit.runner.family_step import MAX_DELIVERIES, BoundReached, FamilyStep
from statekit.runner.outcome import Outcome
from statekit.runner.store.family_rows import CANCELLED
from statekit.runner.store.hold_points import LOCKED
from statekit.runner.store.rows import InstanceRow
from statekit.runner.stored_state import state_columns
from statekit.runner.timer_firing import TimerKey, key_of
from statekit.runner.timers import row_problem, timer_row
from statekit.runner.transaction import InstanceTransaction, outbox_rows
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


def create_in_family(
    path: WriteStages, instance_id: str, context: Mapping[str, Any] | None
) -> InstanceTransaction | None:
    """`Runner.create` of a root whose chart composes: the instance inserted at version 0
    and its initial step handed to the family step (the children its initial states
    invoke start in the same transaction); None when the instance exists already.
    `StartError` for a context the chart refuses; `FamilyBoundError` (nothing created)
    when the initial family step passes `MAX_DELIVERIES`."""
    now_ms = path.now_ms()
    try:
        return _create(path, instance_id, context, now_ms)
    except BoundReached:  # nothing of it was kept: the instance was not created
        raise FamilyBoundError(
            f"{FAMILY_BOUND}: the initial family step of instance {instance_id!r} made "
            f"{MAX_DELIVERIES} deliveries between its members and had more to make (a chart "
            "that invokes itself from its initial state?): nothing was created"
        ) from None


def _create(
    path: WriteStages, instance_id: str, context: Mapping[str, Any] | None, now_ms: int
) -> InstanceTransaction | None:
    store, chart = path.store, path.chart
    result = chart.initialize(context, event_id=START_EVENT, now_ms=now_ms, instance_id=instance_id)
    columns = state_columns(result.state)
    initial = canonical_json(dict(context or {}))
    with store.write():
        step = FamilyStep(path, now_ms)
        if not store.insert_instance(
            instance_id, chart=path.chart_key(chart), columns=columns,
            initial_context=initial, now=step.now, start_clock_ms=now_ms,
        ):  # fmt: skip
            return None
        if result.emitted:
            store.insert_outbox(outbox_rows(instance_id, 0, result.emitted, step.now))
        if result.state.timers:
            store.insert_timers([timer_row(instance_id, t, 0) for t in result.state.timers])
        row = InstanceRow(
            instance_id=instance_id, chart_name=chart.name, chart_version=chart.version,
            chart_digest=chart.digest, version=0, columns=columns, initial_context=initial,
            start_clock_ms=now_ms,
        )  # fmt: skip
        tx = step.create(row, result)
        step.write()
    return tx


def fire_in_family(
    path: WriteStages, problems: dict[TimerKey, str], now_ms: int, limit: int
) -> list[Outcome]:
    """`Runner.fire_due` for a runner that takes the family path: each due timer of this
    chart's instances delivered as a family step of its own (the root of its family
    locked first, then the instance: the one lock order), its outcome with its
    `instance_id`. A timer of a cancelled child, or whose family step passes
    `MAX_DELIVERIES` (nothing of it kept), is not delivered (recorded in `problems`,
    skipped)."""
    store = path.store
    with store.read():
        upcoming = store.upcoming_timers([path.chart.name], limit + len(problems))
    fired: list[Outcome] = []
    for row in upcoming:
        if not isinstance(row.due_ms, int) or row.due_ms > now_ms or len(fired) >= limit:
            break
        if key_of(row) in problems or not isinstance(row.generation, int):
            continue
        try:
            with store.write():
                step = FamilyStep(path, now_ms)
                step.lock_root(row.instance_id)
                stored = path.read_locked(row.instance_id)
                if stored is None:
                    continue
                store.reach(LOCKED)
                tx = step.begin(stored)
                if row_problem(row, tx.start) is not None:
                    continue  # delivered, cancelled or re-armed by a transaction before this one
                if step.status_of(row.instance_id) == CANCELLED:
                    problems[key_of(row)] = "its instance was cancelled: the timer is not delivered"
                    continue
                outcome = step.fire(tx, str(row.timer_id), row.generation)
                path.answer = outcome
                step.write()
        except BoundReached:  # nothing of it was kept; the worker reports it and skips it
            problems[key_of(row)] = (
                f"{FAMILY_BOUND}: its family step made {MAX_DELIVERIES} deliveries between "
                "its members and had more to make: the timer is not delivered"
            )
            continue
        fired.append(replace(outcome, instance_id=row.instance_id))
    return fired

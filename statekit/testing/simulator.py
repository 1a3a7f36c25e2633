"""`RunnerSimulator`: the runner's decisions in memory, for the tests of code that sends events.

    sim = RunnerSimulator(statekit.load("machines/task.yaml"))
    sim.create("task-42")
    o = sim.apply("task-42", "evt-1", "TaskStarted", {...}, expected_version=0)
    o.status, o.reason, o.version, o.duplicate, o.first_event_id

A simulator keeps each instance's state, accepted events, outbox messages and
audit rows in memory and classifies every `apply` exactly as `Runner.apply`
does, because it runs the same decision (`statekit.runner.transaction.
InstanceTransaction.decide`) on the same facts: where an event ID is
recorded (with its payload hash), which accepted event holds the command's
idempotency key, and which event holds a named sequence. So duplicates by
event ID or by business key, payload conflicts, producer sequences, expected
versions and the chart's own classification come out as a store would give
them, without a database. One simulator is one process: there is no
concurrency to simulate, and nothing is durable. Times recorded are the wall
clock's (`time.time`). `RunnerSimulator(chart, clock=...)` gives every step a clock
reading as the runner's `clock` does (epoch ms: what `now` reads in expressions,
and what turns relative delays into due times); without one a step that reads `now`
is rejected `CLOCK_REQUIRED`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import START_EVENT, Chart
from statekit.engine.state import State
from statekit.runner.command_checks import check_instance_id, make_command
from statekit.runner.errors import InstanceExistsError, UnknownInstanceError
from statekit.runner.evidence import stored_evidence
from statekit.runner.instance import Instance, RecordedEvent
from statekit.runner.outcome import Conflict, Outcome
from statekit.runner.store.rows import (
    EventRow,
    InstanceRow,
    NewOutboxRow,
    RecordedId,
    RecordedKey,
    RejectionRow,
)
from statekit.runner.stored_state import loads, state_columns
from statekit.runner.transaction import Command, HistoryFacts, InstanceTransaction, outbox_rows


@dataclass(slots=True)
class _Instance:
    """One simulated instance: its row, state and everything recorded about it."""

    row: InstanceRow
    state: State
    events: list[EventRow] = field(default_factory=list)
    ids: dict[str, EventRow] = field(default_factory=dict)
    keys: dict[tuple[str, str], EventRow] = field(default_factory=dict)
    outbox: list[NewOutboxRow] = field(default_factory=list)
    rejections: list[RejectionRow] = field(default_factory=list)


class RunnerSimulator:
    """Instances of one chart in memory, decided as `Runner` decides (module docstring)."""

    def __init__(self, chart: Chart, *, clock: Callable[[], int] | None = None) -> None:
        self.chart = chart
        self.clock = clock
        self._instances: dict[str, _Instance] = {}

    def create(self, instance_id: str, context: Mapping[str, Any] | None = None) -> Instance:
        """Create an instance at version 0 (`InstanceExistsError` when the ID is taken,
        `StartError` for a bad context), as `Runner.create`."""
        check_instance_id(instance_id)
        if instance_id in self._instances:
            raise InstanceExistsError(f"instance {instance_id!r} already exists")
        now_ms = None if self.clock is None else self.clock()
        result = self.chart.initialize(
            context, event_id=START_EVENT, now_ms=now_ms, instance_id=instance_id
        )
        row = InstanceRow(
            instance_id=instance_id,
            chart_name=self.chart.name,
            chart_version=self.chart.version,
            chart_digest=self.chart.digest,
            version=0,
            columns=state_columns(result.state),
            initial_context=canonical_json(dict(context or {})),
        )
        instance = _Instance(row=row, state=result.state)
        instance.outbox.extend(outbox_rows(instance_id, 0, result.emitted, time.time()))
        self._instances[instance_id] = instance
        return self.load(instance_id)

    def load(self, instance_id: str) -> Instance:
        """The instance's version and state (`UnknownInstanceError`)."""
        instance = self._instance(instance_id)
        return Instance(
            instance_id=instance_id,
            version=instance.row.version,
            state=instance.state,
            chart_name=instance.row.chart_name,
            chart_version=instance.row.chart_version,
            chart_digest=instance.row.chart_digest,
        )

    def apply(
        self,
        instance_id: str,
        event_id: str,
        type: str,
        payload: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
        sequence: int | None = None,
        *,
        after_conflict: Conflict | None = None,
    ) -> Outcome:
        """Classify and record one event as `Runner.apply` would (same arguments, same
        `Outcome`, same `ValueError` for arguments that cannot be a command)."""
        check_instance_id(instance_id)
        command = make_command(event_id, type, payload, expected_version, sequence, after_conflict)
        instance = self._instance(instance_id)
        now_ms = None if self.clock is None else self.clock()
        tx = InstanceTransaction(
            self.chart,
            instance.row,
            instance.state,
            snapshot_every=None,
            now=time.time(),
            now_ms=now_ms,
        )
        outcome = tx.decide(command, self._facts(instance, tx, command))
        sent = [tx.decide(c, self._facts(instance, tx, c)) for c in tx.sends()]  # as the runner
        for event in tx.events:
            instance.events.append(event)
            instance.ids[event.event_id] = event
            if event.idempotency_key is not None:
                instance.keys[(event.type, event.idempotency_key)] = event
        instance.outbox.extend(tx.outbox)
        instance.rejections.extend(tx.rejections)
        if tx.events:
            instance.row = replace(instance.row, version=tx.version, columns=tx.columns)
            instance.state = tx.state
        return replace(outcome, sent=tuple(sent)) if sent else outcome

    def history(self, instance_id: str) -> list[RecordedEvent]:
        """The accepted events of an instance, in order (as `Runner.history`)."""
        return [
            RecordedEvent(
                sequence=e.sequence,
                event_id=e.event_id,
                type=e.type,
                payload=loads(e.payload, "payload"),
                payload_sha256=e.payload_sha256,
                status=e.status,
                chart_version=e.chart_version,
                evidence=stored_evidence(e.evidence, e.event_id, "evidence"),
                recorded_at=e.recorded_at,
                idempotency_key=e.idempotency_key,
            )
            for e in self._instance(instance_id).events
        ]

    def rejections(self, instance_id: str) -> list[dict[str, Any]]:
        """The audited rejections, conflicts and duplicates of a fact, oldest first (as
        `Runner.rejections`)."""
        return [
            {
                "event_id": r.event_id,
                "type": r.type,
                "payload": loads(r.payload, "payload"),
                "status": r.status,
                "reason": r.reason,
                "message": r.message,
                "version": r.version,
                "detail": loads(r.detail, "detail"),
                "recorded_at": r.recorded_at,
            }
            for r in self._instance(instance_id).rejections
        ]

    def outbox(self, instance_id: str) -> list[dict[str, Any]]:
        """The messages an instance emitted, in order: message ID, sequence of the event
        that emitted it (0: creation), type and payload (nothing is delivered here)."""
        return [
            {
                "message_id": m.message_id,
                "sequence": m.sequence,
                "type": m.type,
                "payload": loads(m.payload, "payload"),
            }
            for m in self._instance(instance_id).outbox
        ]

    def _instance(self, instance_id: str) -> _Instance:
        instance = self._instances.get(instance_id)
        if instance is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        return instance

    @staticmethod
    def _facts(instance: _Instance, tx: InstanceTransaction, command: Command) -> HistoryFacts:
        """What the history says about `command`: the facts `transaction.read_facts`
        reads from a store, read from memory."""
        event = instance.ids.get(command.event_id)
        if event is not None:
            recorded = RecordedId(
                sequence=event.sequence, payload_sha256=event.payload_sha256, status=event.status
            )
            return HistoryFacts(recorded=recorded)
        key = tx.key_of(command)
        holder = None if key is None else instance.keys.get((command.type, key))
        if holder is not None:
            return HistoryFacts(
                key_holder=RecordedKey(
                    sequence=holder.sequence,
                    event_id=holder.event_id,
                    payload_sha256=holder.payload_sha256,
                )
            )
        at = tx.sequence_to_look_up(command)
        if at is None or not 1 <= at <= len(instance.events):
            return HistoryFacts()
        return HistoryFacts(event_id_at_sequence=instance.events[at - 1].event_id)

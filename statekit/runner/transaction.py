"""The decisions of one write transaction on one locked instance.

`InstanceTransaction` holds the instance's state and version while the
transaction runs, classifies each command in turn (duplicate ID, sequence,
expected version, then the pure `chart.send`) and collects the rows to write;
`flush()` writes them: event rows, one version-guarded instance update,
outbox rows, audit rows, snapshots. `Runner.apply` runs one command through
it, `Runner.apply_batch` many commands of one stream (one transaction,
one instance update).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from statekit.engine.chart import Chart
from statekit.engine.result import Result, Status
from statekit.engine.state import State
from statekit.runner.outcome import (
    DUPLICATE_OR_OLD_SEQUENCE,
    EVENT_ID_PAYLOAD_CONFLICT,
    SEQUENCE_GAP,
    VERSION_CONFLICT,
    Conflict,
    Outcome,
    OutcomeStatus,
)
from statekit.runner.records import (
    ENGINE_VERSION,
    InstanceRow,
    StateColumns,
    dumps,
    evidence_json,
    payload_record,
    text_sha256,
)
from statekit.runner.rows import EventRow, RejectionRow, SnapshotRow
from statekit.runner.sql import Store

APPLIED, ALREADY = OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED
REJECTED, CONFLICT = OutcomeStatus.REJECTED, OutcomeStatus.CONFLICT
Recorded = tuple[int, str, str]
"""A recorded event ID's (sequence, payload sha256, status)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One event to apply, with the caller's expectations (see `Runner.apply`)."""

    event_id: str
    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    expected_version: int | None = None
    sequence: int | None = None
    after_conflict: Conflict | None = None


class InstanceTransaction:
    """See the module docstring; `state`, `columns` and `version` follow each decision."""

    def __init__(
        self,
        store: Store,
        chart: Chart,
        row: InstanceRow,
        state: State,
        snapshot_every: int | None,
    ) -> None:
        self.store, self.chart, self.row = store, chart, row
        self.instance_id = row.instance_id
        self.state, self.columns, self.version = state, row.columns, row.version
        self.snapshot_every = snapshot_every
        self.now = time.time()
        self.events: list[EventRow] = []
        self.outbox: list[tuple[str, str, int, str, str, float]] = []
        self.rejections: list[RejectionRow] = []
        self.snapshots: list[SnapshotRow] = []
        self._ids: dict[str, Recorded] = {}

    def recorded(self, event_id: str) -> Recorded | None:
        """Where this event ID is recorded: earlier in this transaction, or in the store."""
        found = self._ids.get(event_id)
        if found is None:
            found = self.store.recorded_event(self.instance_id, event_id)
        return found

    def _event_id_at(self, sequence: int) -> str | None:
        base = self.row.version
        if sequence > base and sequence - base <= len(self.events):
            return self.events[sequence - base - 1].event_id
        return self.store.event_id_at(self.instance_id, sequence)

    def decide(self, command: Command, recorded: Recorded | None) -> Outcome:
        """Classify one command against the current state; queue its rows."""
        c, version, state = command, self.version, self.state
        race = c.after_conflict
        text, digest = payload_record(c.type, c.payload)
        if recorded is not None:  # this event ID is already in the history
            sequence, recorded_sha, status = recorded
            if recorded_sha == digest:
                return Outcome(
                    ALREADY, None, version, state, c.event_id, sequence=sequence,
                    duplicate=True, race=race,
                    message=f"event {c.event_id!r} was recorded at sequence {sequence} ({status})",
                )  # fmt: skip
            conflict = Conflict(
                EVENT_ID_PAYLOAD_CONFLICT, c.expected_version, version, c.event_id, sequence
            )
            message = (
                f"event {c.event_id!r} was recorded at sequence {sequence} with another payload;"
                " nothing applied"
            )
            return self._audit(c, text, digest, conflict, message)
        if c.sequence is not None and c.sequence != version + 1:
            if c.sequence <= version:
                holder = self._event_id_at(c.sequence)
                conflict = Conflict(
                    DUPLICATE_OR_OLD_SEQUENCE, c.sequence - 1, version, holder, c.sequence
                )
                message = f"sequence {c.sequence} is taken by event {holder!r}"
                return self._audit(c, text, digest, conflict, message)
            return Outcome(
                CONFLICT, SEQUENCE_GAP, version, state, c.event_id,
                conflict=Conflict(SEQUENCE_GAP, c.sequence - 1, version),
                missing=(version + 1, c.sequence - 1), race=race,
                message=f"sequence {c.sequence} arrived at version {version}: "
                f"{version + 1}..{c.sequence - 1} missing; nothing applied",
            )  # fmt: skip
        expected = c.expected_version
        if expected is not None and expected != version:
            winner = self._event_id_at(expected + 1) if 0 <= expected < version else None
            conflict = Conflict(
                VERSION_CONFLICT, expected, version, winner,
                expected + 1 if winner is not None else None,
            )  # fmt: skip
            came = f" (event {winner!r} came first)" if winner else ""
            return Outcome(
                CONFLICT, VERSION_CONFLICT, version, state, c.event_id, conflict=conflict,
                race=race, message=f"expected version {expected}, the instance is at "
                f"{version}{came}; re-read and decide again",
            )  # fmt: skip
        result = self.chart.send(state, c.type, c.payload, event_id=c.event_id)
        if result.status is Status.REJECTED:
            detail = {} if race is None else {"race": race.to_data()}
            self.rejections.append(
                RejectionRow(
                    0, self.instance_id, c.event_id, c.type, text, digest,
                    REJECTED.value, result.reason or "", result.message, version,
                    dumps(detail), self.now,
                )
            )  # fmt: skip
            return Outcome(
                REJECTED, result.reason, version, state, c.event_id, result,
                message=result.message, race=race,
            )  # fmt: skip
        return self._accept(c, text, digest, result)

    def _accept(self, c: Command, text: str, digest: str, result: Result) -> Outcome:
        version = self.version + 1
        new = result.state
        if new is not self.state:
            self.columns = StateColumns.of(new)
        self.state, self.version = new, version
        self.events.append(
            EventRow(
                self.instance_id, version, c.event_id, c.type, text, digest,
                result.status.value, self.chart.version, evidence_json(result, c.after_conflict),
                self.now,
            )
        )  # fmt: skip
        self._ids[c.event_id] = (version, digest, result.status.value)
        for m in result.emitted:
            self.outbox.append(
                (self.instance_id, m.message_id, version, m.type, dumps(dict(m.payload)),
                 self.now)
            )  # fmt: skip
        if self.snapshot_every and version % self.snapshot_every == 0:
            self.snapshots.append(snapshot_row(self.instance_id, version, new, self.now))
        status = APPLIED if result.status is Status.APPLIED else ALREADY
        return Outcome(
            status, None, version, new, c.event_id, result, sequence=version,
            race=c.after_conflict, emitted=result.emitted,
        )  # fmt: skip

    def _audit(
        self, c: Command, text: str, digest: str, conflict: Conflict, message: str
    ) -> Outcome:
        """Record a history conflict for investigation; return its CONFLICT outcome."""
        self.rejections.append(
            RejectionRow(
                0, self.instance_id, c.event_id, c.type, text, digest,
                CONFLICT.value, conflict.reason, message, self.version,
                dumps(conflict.to_data()), self.now,
            )
        )  # fmt: skip
        return Outcome(
            CONFLICT, conflict.reason, self.version, self.state, c.event_id,
            message=message, conflict=conflict, race=c.after_conflict,
        )  # fmt: skip

    def flush(self, chart_key: tuple[str, int, str]) -> None:
        """Write everything decided, inside the caller's write transaction."""
        store = self.store
        if self.events:
            store.insert_events(self.events)
            moved = store.update_instance(
                self.instance_id, self.row.version, self.version, chart_key, self.columns, self.now
            )
            if not moved:  # the row is locked (or the writer alone): roll everything back
                raise RuntimeError(
                    f"instance {self.instance_id!r} left version {self.row.version} during its "
                    "own transaction"
                )
        if self.outbox:
            store.insert_outbox(self.outbox)
        for rejection in self.rejections:
            store.insert_rejection(rejection)
        for snapshot in self.snapshots:
            store.insert_snapshot(snapshot)


def snapshot_row(instance_id: str, sequence: int, state: State, now: float) -> SnapshotRow:
    """The snapshot of `state` after `sequence` events."""
    text = state.to_json()
    data = state.to_data()
    return SnapshotRow(
        instance_id,
        sequence,
        text,
        text_sha256(text),
        state.chart_digest,
        data["version"],
        ENGINE_VERSION,
        now,
    )

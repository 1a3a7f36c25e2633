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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statekit.compiler.serialize import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.result import EmittedMessage, Result, Status
from statekit.engine.state import State
from statekit.runner.evidence import evidence_json
from statekit.runner.hashes import encode_payload
from statekit.runner.outcome import (
    DUPLICATE_OR_OLD_SEQUENCE,
    EVENT_ID_PAYLOAD_CONFLICT,
    SEQUENCE_GAP,
    VERSION_CONFLICT,
    Conflict,
    Outcome,
    OutcomeStatus,
)
from statekit.runner.snapshots import snapshot_row
from statekit.runner.store.base import Store
from statekit.runner.store.rows import (
    ChartKey,
    EventRow,
    InstanceRow,
    NewOutboxRow,
    RecordedId,
    RejectionRow,
    SnapshotRow,
)
from statekit.runner.stored_state import state_columns

APPLIED, ALREADY = OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED
REJECTED, CONFLICT = OutcomeStatus.REJECTED, OutcomeStatus.CONFLICT


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
        self.outbox: list[NewOutboxRow] = []
        self.rejections: list[RejectionRow] = []
        self.snapshots: list[SnapshotRow] = []
        self._ids: dict[str, RecordedId] = {}

    def recorded(self, event_id: str) -> RecordedId | None:
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

    def decide(self, command: Command, recorded: RecordedId | None) -> Outcome:
        """Classify one command against the current state; queue its rows."""
        c, version, state = command, self.version, self.state
        race = c.after_conflict
        encoded = encode_payload(c.type, c.payload)
        text, digest = encoded.text, encoded.sha256
        if recorded is not None:  # this event ID is already in the history
            sequence, status = recorded.sequence, recorded.status
            if recorded.payload_sha256 == digest:
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
                    instance_id=self.instance_id,
                    event_id=c.event_id,
                    type=c.type,
                    payload=text,
                    payload_sha256=digest,
                    status=REJECTED.value,
                    reason=result.reason or "",
                    message=result.message,
                    version=version,
                    detail=canonical_json(detail),
                    recorded_at=self.now,
                )
            )
            return Outcome(
                REJECTED, result.reason, version, state, c.event_id, result,
                message=result.message, race=race,
            )  # fmt: skip
        return self._accept(c, text, digest, result)

    def _accept(self, c: Command, text: str, digest: str, result: Result) -> Outcome:
        version = self.version + 1
        new = result.state
        if new is not self.state:
            self.columns = state_columns(new)
        self.state, self.version = new, version
        self.events.append(
            EventRow(
                instance_id=self.instance_id,
                sequence=version,
                event_id=c.event_id,
                type=c.type,
                payload=text,
                payload_sha256=digest,
                status=result.status.value,
                chart_version=self.chart.version,
                evidence=evidence_json(result, c.after_conflict),
                recorded_at=self.now,
            )
        )
        self._ids[c.event_id] = RecordedId(
            sequence=version, payload_sha256=digest, status=result.status.value
        )
        self.outbox.extend(outbox_rows(self.instance_id, version, result.emitted, self.now))
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
                instance_id=self.instance_id,
                event_id=c.event_id,
                type=c.type,
                payload=text,
                payload_sha256=digest,
                status=CONFLICT.value,
                reason=conflict.reason,
                message=message,
                version=self.version,
                detail=canonical_json(conflict.to_data()),
                recorded_at=self.now,
            )
        )
        return Outcome(
            CONFLICT, conflict.reason, self.version, self.state, c.event_id,
            message=message, conflict=conflict, race=c.after_conflict,
        )  # fmt: skip

    def flush(self, chart_key: ChartKey) -> None:
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


def outbox_rows(
    instance_id: str, sequence: int, emitted: Sequence[EmittedMessage], now: float
) -> list[NewOutboxRow]:
    """The outbox rows of the messages emitted by the event at `sequence` (0: creation)."""
    return [
        NewOutboxRow(
            instance_id=instance_id,
            message_id=m.message_id,
            sequence=sequence,
            type=m.type,
            payload=canonical_json(dict(m.payload)),
            created_at=now,
        )
        for m in emitted
    ]

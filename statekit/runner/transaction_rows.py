"""The state and the rows of one write transaction on one locked instance.

`TransactionRows` is what an `InstanceTransaction` (`transaction`) holds while its
decisions are made: the instance's state, columns and version after each one, the
rows queued for them (event rows, outbox rows, audit rows, snapshots, and the
sequence that armed each timer), the undelayed sends still to decide, and the
events accepted so far by event ID and idempotency key (what a later command in the
same transaction is decided against). Recording an accepted event (`_accept`) or
an audit row (`_audit_row`) queues its rows; `mark`/`restore` take a command's
rows back; `decided` gives the rows for one `Store.write_decided` (the timer rows
that take the store from the timers armed before the transaction to those after
it: `runner.timers`), which `write` and `flush` call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from statekit.compiler.canonical import canonical_json
from statekit.compiler.expressions.event_meta import sent_as
from statekit.engine.chart import Chart
from statekit.engine.result import EmittedMessage, Result, Status
from statekit.engine.state import State
from statekit.runner.decision_inputs import Command
from statekit.runner.evidence import evidence_json
from statekit.runner.keys import idempotency_key
from statekit.runner.outcome import Conflict, Outcome, OutcomeStatus
from statekit.runner.repeated_facts import RepeatedFact
from statekit.runner.snapshots import snapshot_row
from statekit.runner.store.base import Store
from statekit.runner.store.rows import (
    ChartKey,
    DecidedRows,
    EventRow,
    InstanceMove,
    InstanceRow,
    NewOutboxRow,
    RecordedId,
    RecordedKey,
    RejectionRow,
    SnapshotRow,
    StateColumns,
    TimerRow,
    positional,
)
from statekit.runner.stored_state import state_columns
from statekit.runner.timers import PendingTimerRows, sent_event_id, timer_row

APPLIED, ALREADY = OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED
REJECTED, CONFLICT = OutcomeStatus.REJECTED, OutcomeStatus.CONFLICT

# The records built for every accepted event, built positionally (`rows.positional`, over
# `record_makers.maker`: the same objects as their keyword constructors build, in about a
# third of the time; a frozen dataclass's own `__init__` sets each field by name, which on
# this path cost as much as the statements' Python).
_event_row = positional(
    EventRow, "instance_id", "sequence", "event_id", "type", "payload", "payload_sha256",
    "status", "chart_version", "evidence", "recorded_at", "idempotency_key", "clock_ms",
    "payload_digest",
)  # fmt: skip
_outbox_row = positional(
    NewOutboxRow, "instance_id", "message_id", "sequence", "type", "payload", "created_at"
)
_outcome = positional(
    Outcome, "status", "reason", "version", "state", "event_id", "result", "sequence",
    "duplicate", "message", "conflict", "race", "missing", "emitted",
)  # fmt: skip
_instance_row = positional(
    InstanceRow, "instance_id", "chart_name", "chart_version", "chart_digest", "version",
    "columns", "initial_context", "recorded", "start_clock_ms",
)  # fmt: skip
_move = positional(
    InstanceMove, "instance_id", "read_version", "new_version", "chart", "columns", "now",
    "read", "before",
)  # fmt: skip
_decided = positional(
    DecidedRows, "timers_deleted", "timers_inserted", "events", "moves", "outbox",
    "rejections", "snapshots",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a transaction stood before a command: its state and how many rows
    of each kind it had queued (`TransactionRows.restore` goes back to it)."""

    state: State
    version: int
    columns: StateColumns
    accepted: bool
    events: int
    outbox: int
    rejections: int
    snapshots: int
    ids: dict[str, EventRow]
    keys: dict[tuple[str, str], EventRow]
    sends: tuple[Command, ...]
    sent: int
    root: str
    timer_rows: PendingTimerRows


class TransactionRows:
    """See the module docstring; `state`, `columns` and `version` follow each decision,
    `now` is the time every row written by this transaction records."""

    # slotted: one is built for every event `Runner.apply` decides
    __slots__ = (
        "_ids", "_keys", "_root", "_sends", "_sent", "accepted",
        "chart", "columns", "events", "instance_id", "now", "now_ms", "outbox", "rejections", "row",
        "snapshot_every", "snapshots", "start", "state", "timer_rows", "version",
    )  # fmt: skip

    def __init__(
        self,
        chart: Chart,
        row: InstanceRow,
        state: State,
        *,
        snapshot_every: int | None,
        now: float,
        now_ms: int | None = None,
    ) -> None:
        self.chart, self.row = chart, row
        self.instance_id = row.instance_id
        self.state, self.columns, self.version = state, row.columns, row.version
        self.snapshot_every = snapshot_every
        self.now, self.now_ms = now, now_ms
        self.start = state  # the state whose timers the store holds before this transaction
        # the timer rows to write: what the events decided armed, cancelled or consumed
        self.timer_rows = PendingTimerRows()
        self._sends: deque[Command] = deque()  # undelayed sends still to decide, in order
        self._sent = 0  # how many events the current root event sent (sent_event_id)
        self._root = ""
        self.events: list[EventRow] = []
        self.outbox: list[NewOutboxRow] = []
        self.rejections: list[RejectionRow] = []
        self.snapshots: list[SnapshotRow] = []
        self._ids: dict[str, EventRow] = {}  # the events accepted here, by event ID
        self._keys: dict[tuple[str, str], EventRow] = {}  # … by (type, idempotency key)
        self.accepted = False  # whether an event was accepted (the instance moves)

    def mark(self) -> Mark:
        """Where this transaction stands (to `restore` after a command's rows failed)."""
        return Mark(
            state=self.state,
            version=self.version,
            columns=self.columns,
            accepted=self.accepted,
            events=len(self.events),
            outbox=len(self.outbox),
            rejections=len(self.rejections),
            snapshots=len(self.snapshots),
            ids=dict(self._ids),
            keys=dict(self._keys),
            sends=tuple(self._sends),
            sent=self._sent,
            root=self._root,
            timer_rows=self.timer_rows.copy(),
        )

    def restore(self, mark: Mark) -> None:
        """Forget every decision made since `mark` (its rows were rolled back)."""
        self.state, self.version, self.columns = mark.state, mark.version, mark.columns
        self.accepted = mark.accepted
        del self.events[mark.events :], self.outbox[mark.outbox :]
        del self.rejections[mark.rejections :], self.snapshots[mark.snapshots :]
        self._ids, self._keys = mark.ids, mark.keys
        self._sends, self._sent, self._root = deque(mark.sends), mark.sent, mark.root
        self.timer_rows = mark.timer_rows

    def written(self) -> None:
        """The queued rows are written (inside the transaction): queue anew from here, the
        instance row now being at this version."""
        self.row = replace(self.row, version=self.version, columns=self.columns)
        self.start = self.state  # the store now holds these timers
        self.timer_rows = PendingTimerRows()
        self.events, self.outbox, self.rejections, self.snapshots = [], [], [], []

    def committed_row(self) -> InstanceRow:
        """The instance row as this transaction leaves it (once committed)."""
        row = self.row
        if row.version == self.version and row.columns is self.columns and row.recorded is None:
            return row
        # not `replace`: this runs once per event (see `_instance_row` for the order)
        return _instance_row(
            row.instance_id, row.chart_name, row.chart_version, row.chart_digest, self.version,
            self.columns, row.initial_context, None, row.start_clock_ms,
        )  # fmt: skip

    def key_of(self, command: Command) -> str | None:
        """The command's idempotency key under this transaction's chart (None: none)."""
        return idempotency_key(self.chart.ir, command.type, command.payload)

    def key_here(self, event_type: str, key: str) -> RecordedKey | None:
        """The event accepted earlier in this transaction that holds this key, if any."""
        event = self._keys.get((event_type, key))
        if event is None:
            return None
        return RecordedKey(
            sequence=event.sequence, event_id=event.event_id, payload_sha256=event.payload_sha256
        )

    def recorded_here(self, event_id: str) -> RecordedId | None:
        """Where this event ID is recorded by an event accepted earlier in this transaction."""
        event = self._ids.get(event_id)
        if event is None:
            return None
        return RecordedId(
            sequence=event.sequence, payload_sha256=event.payload_sha256, status=event.status
        )

    def event_id_here(self, sequence: int) -> str | None:
        """The event ID this transaction accepted at `sequence`, if it did."""
        base = self.row.version
        if sequence > base and sequence - base <= len(self.events):
            return self.events[sequence - base - 1].event_id
        return None

    def sends(self) -> Iterator[Command]:
        """The undelayed sends of the events accepted so far, in the order of the external
        queue, as commands for `decide` (each one's own sends join the queue as it is
        accepted)."""
        while self._sends:
            yield self._sends.popleft()

    def queue_sends(self, root: str, result: Result) -> None:
        """Queue `result`'s undelayed sends as events after the event `root` (the creation
        uses it; `decide` and `fire` do it for the events they accept)."""
        if root != self._root:
            self._root, self._sent = root, 0
        for sent in result.sent:
            self._sent += 1
            self._sends.append(
                Command(
                    event_id=sent_event_id(self._root, self._sent),
                    type=sent.event,
                    payload=sent_as(sent.payload, sent.id),  # what `_event` says of it
                )
            )

    def _repeated(
        self, c: Command, fact: RepeatedFact, conflict: Conflict, message: str
    ) -> Outcome:
        """The outcome of `c`, which repeats `fact`, at the current version and state."""
        if fact.same:
            return Outcome(
                status=ALREADY,
                reason=None,
                version=self.version,
                state=self.state,
                event_id=c.event_id,
                sequence=fact.sequence,
                duplicate=True,
                race=c.after_conflict,
                first_event_id=fact.event_id,
                message=message,
            )
        return Outcome(
            status=CONFLICT,
            reason=conflict.reason,
            version=self.version,
            state=self.state,
            event_id=c.event_id,
            message=message,
            conflict=conflict,
            race=c.after_conflict,
            first_event_id=fact.event_id,
        )

    def _accept(
        self,
        c: Command,
        text: str,
        digest: str,
        raw: bytes,
        result: Result,
        *,
        rejected: bool = False,
    ) -> Outcome:
        """Record the event (or, `rejected`, a timer delivery that consumed its timer) at
        the next sequence, with its payload `text` and the sha256 of its type and `text`
        (`raw`, its hex `digest`: the row carries both to the store, which packs the hash
        without computing it again); queue its rows, its timers' sequence and its sends."""
        version = self.version + 1
        key = None if rejected else self.key_of(c)
        new = result.state
        old = self.state
        if new is not old:
            self.columns = state_columns(new)
        self.state, self.version, self.accepted = new, version, True
        event = _event_row(  # the fields of `EventRow`, in order
            self.instance_id,
            version,
            c.event_id,
            c.type,
            text,
            digest,
            result.status.value,
            self.chart.version,
            evidence_json(result, c.after_conflict, c.event_id),
            self.now,
            key,
            self.now_ms,
            raw,
        )
        self.events.append(event)
        if new is not old and (new.timer_generation or old.timer_generation):
            self._timer_changes(result, old, new, version)
        if result.sent:
            self.queue_sends(self._root or c.event_id, result)
        self._ids[c.event_id] = event
        if key is not None:
            self._keys[(c.type, key)] = event
        emitted = result.emitted
        if emitted:
            self.outbox.extend(outbox_rows(self.instance_id, version, emitted, self.now))
        if self.snapshot_every and version % self.snapshot_every == 0:
            self.snapshots.append(snapshot_row(self.instance_id, version, new, self.now))
        status = APPLIED if result.status is Status.APPLIED else ALREADY
        return _outcome(  # see `_outcome` for the order
            status, None, version, new, c.event_id, result, version, False, None, None,
            c.after_conflict, None, emitted,
        )  # fmt: skip

    def _timer_changes(self, result: Result, old: State, new: State, version: int) -> None:
        """Queue the timer rows of the event at `version` (`old` → `new`): a row for each
        timer it armed, a delete for each it cancelled, replaced or consumed. Read without
        looking at the timers it left alone: the cost is that of the timers it changed."""
        pending, instance_id = self.timer_rows, self.instance_id
        consumed = result.timer
        if consumed is not None:
            pending.removed(consumed)
        armed, counter = new.timers, old.timer_generation
        first = len(armed)
        if new.timer_generation != counter:
            # the timers this event armed (`result.timers_armed`) are the state's last ones,
            # those past the counter before it: read from the state, since a compiled
            # macrostep's result would replay its timer operations to give them
            while first and armed[first - 1].generation > counter:
                first -= 1
        # the removals first, then the arms: a timer armed again under its ID is one upsert
        kept = len(old.timers) - (consumed is not None)
        if not first and kept:  # none of the old timers is left (a state re-entered):
            # all of them cancelled, read without `result.timers_cancelled`, which replays
            # a compiled macrostep's timer operations (8% of a timed event's instructions)
            gone = None if consumed is None else consumed.id
            for timer in old.timers:
                if timer.id != gone:
                    pending.removed(timer)
        elif first < kept:  # fewer of the old timers are left: some were cancelled
            for timer in result.timers_cancelled:
                pending.removed(timer)
        for timer in armed[first:]:
            pending.armed(timer_row(instance_id, timer, version))

    def _audit_row(
        self,
        c: Command,
        text: str,
        digest: str,
        status: OutcomeStatus,
        conflict: Conflict,
        message: str,
    ) -> None:
        self.rejections.append(
            RejectionRow(
                instance_id=self.instance_id,
                event_id=c.event_id,
                type=c.type,
                payload=text,
                payload_sha256=digest,
                status=status.value,
                reason=conflict.reason,
                message=message,
                version=self.version,
                detail=canonical_json(conflict.to_data()),
                recorded_at=self.now,
            )
        )

    def flush(self, store: Store, chart_key: ChartKey, *, last: bool = False) -> None:
        """Write everything decided to `store`, inside the caller's write transaction
        (RuntimeError, rolling everything back, if the instance is no longer at the
        version read: the caller locked it, so this never happens); `last` as `write`."""
        if not self.write(store, chart_key, last=last):
            raise RuntimeError(
                f"instance {self.instance_id!r} left version {self.row.version} during its "
                "own transaction"
            )

    def write(
        self, store: Store, chart_key: ChartKey, *, unread: bool = False, last: bool = False
    ) -> bool:
        """Write everything decided to `store` with one `Store.write_decided`, inside the
        caller's write transaction; False, having written nothing, when the instance is
        no longer at the version read (the caller rolls back). `unread`: the row was not
        read in this transaction (a cached one), so the update also checks that the
        stored row still holds its chart digest and state texts. The version-guarded
        instance update goes first, so a writer that did not lock the row takes its lock
        there, in the order every other writer takes it (the instance row, then the
        rest), and never deadlocks; the database refusing a row (a unique index: a
        recorded event ID or business key) raises its own error. `last`: nothing else
        follows in the transaction, so the store may commit with the writes (PostgreSQL:
        one query)."""
        return store.write_decided(self.decided(chart_key, unread=unread), last=last)

    def decided(self, chart_key: ChartKey, *, unread: bool = False) -> DecidedRows:
        """The rows this transaction has decided so far, for `Store.write_decided`
        (`unread`: see `write`)."""
        deleted: tuple[tuple[str, str], ...] = ()
        inserted: tuple[TimerRow, ...] = ()
        pending = self.timer_rows
        if pending.deleted or pending.inserted:
            deleted, inserted = pending.rows(self.instance_id)
        moves: tuple[InstanceMove, ...] = ()
        row = self.row
        if self.events:
            moves = (  # see `_move` and `_decided` for the order
                _move(
                    self.instance_id, row.version, self.version, chart_key, self.columns,
                    self.now, row if unread else None, row,
                ),
            )  # fmt: skip
        return _decided(
            deleted, inserted, tuple(self.events), moves, tuple(self.outbox),
            tuple(self.rejections), tuple(self.snapshots),
        )  # fmt: skip


def outbox_rows(
    instance_id: str, sequence: int, emitted: Sequence[EmittedMessage], now: float
) -> list[NewOutboxRow]:
    """The outbox rows of the messages emitted by the event at `sequence` (0: creation)."""
    return [  # NewOutboxRow(instance_id=, message_id=, sequence=, type=, payload=, created_at=)
        _outbox_row(
            instance_id, m.message_id, sequence, m.type, canonical_json(dict(m.payload)), now
        )
        for m in emitted
    ]

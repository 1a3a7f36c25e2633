"""`Runner`: read → `chart.send` (pure) → write, one database transaction per event.

    runner = statekit.Runner(statekit.load("machines/task.yaml"), store)
    runner.create("task-42")
    o = runner.apply("task-42", "evt-1", "TaskStarted", {...}, expected_version=0)
    o.status, o.reason, o.version, o.state

`apply` opens one write transaction (the store's locking: see
`store.sqlite` and `store.postgres`), reads the instance and the record of
the event ID, classifies (`transaction.InstanceTransaction`), and for an
accepted event inserts the event row
(sequence = version + 1, payload sha256, evidence), moves the instance to
the new version only where it still has the version read, and inserts the
outbox rows; all of it commits together or not at all. On an instance whose
row this runner committed last, nothing is read: the event is decided on that
row and the database checks it (see `runner.row_cache`). A rejection or a
history conflict writes one audit row and changes nothing else; a duplicate,
a version conflict or a sequence gap writes nothing.

An instance stays on the chart version it was created under (events are
decided by that version's chart, which the runner finds among `previous` or
the store's kept sources); it moves to this runner's version only by
`migrate`, which records the move as a history entry of its own (see
`runner.migration`).

Time (`runner.timers`): every transaction reads the runner's clock once
(`clock`, epoch milliseconds; the wall clock by default) and passes it to the
engine as `now_ms`, so relative delays become due times, and each event row
records the reading. Timer rows are written and deleted with the event that
armed, cancelled or delivered them. An event's undelayed sends are applied
right after it, in the same transaction, each as an event of its own
(`statekit.send/<event ID>/<n>`); one the chart rejects is audited like any
rejection and the events before it still commit. `fire_due` delivers the
timers that are due.

Accepted events are those the chart APPLIED or classified ALREADY_APPLIED
(an `already` entry): both claim their event ID and their sequence, so a
redelivery is recognised and a producer's stream stays contiguous; the latter
changes no state and emits nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from statekit.compiler.serialize import canonical_json
from statekit.engine import observers
from statekit.engine.chart import START_EVENT, Chart
from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet, refuse_changed_version
from statekit.runner.command_checks import check_instance_id, check_stored_int, make_command
from statekit.runner.errors import IdentifierBoundError, InstanceExistsError, UnknownInstanceError
from statekit.runner.evidence import stored_evidence
from statekit.runner.group_commit import GroupWork, Item, run_group
from statekit.runner.hashes import encode_payload
from statekit.runner.identifier_bounds import chart_problems
from statekit.runner.instance import Instance, RecordedEvent
from statekit.runner.migration import (
    MIGRATE_TYPE,
    Mapped,
    MigrationReport,
    Stranded,
    entry_evidence,
    entry_payload,
    map_state,
    migration_event_id,
    state_sha256,
)
from statekit.runner.outcome import Conflict, Outcome
from statekit.runner.row_cache import Cached, RowCache
from statekit.runner.snapshots import Rebuilt, rebuild, snapshot_row
from statekit.runner.store.base import Store
from statekit.runner.store.hold_points import DECIDED, LOCKED
from statekit.runner.store.rows import (
    ChartKey,
    EventRow,
    InstanceRow,
)
from statekit.runner.stored_state import loads, state_columns, state_of
from statekit.runner.timer_firing import TimerKey, fire_due, row_error
from statekit.runner.timers import timer_row
from statekit.runner.transaction import (
    Command,
    HistoryFacts,
    InstanceTransaction,
    LookedUp,
    outbox_rows,
    read_facts,
)
from statekit.runner.verify import VerifyReport, verify


def wall_clock_ms() -> int:
    """The wall clock in epoch milliseconds (the runner's default clock)."""
    return time.time_ns() // 1_000_000


class Runner:
    """Durable instances of one chart in one store (see the module docstring).

    The store keeps the chart's YAML text (`Chart.source`, which `statekit.load`
    fills in), so that histories written under this version can be replayed
    after a newer one is deployed. `previous` lists
    older versions of the chart, for replaying histories that began under them
    (versions whose source the store kept are found there too).
    `snapshot_every=N` stores a snapshot in the same transaction as every Nth event.
    `clock`: a zero-argument callable giving epoch milliseconds (an int), read once
    per transaction (default: the wall clock); due times come from it.
    A chart (or previous one) whose version the store holds with another digest is a
    ChartVersionError (`refuse_changed_version`): a changed chart needs a new version.
    A runner holds its store's connection: use one per thread or process. Over a store
    opened with `open_read_only_store` it registers nothing and can only read (`history`,
    `verify`, `migrate(dry_run=True)`).
    """

    def __init__(
        self,
        chart: Chart,
        store: Store,
        *,
        previous: Iterable[Chart] = (),
        snapshot_every: int | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        if snapshot_every is not None and snapshot_every < 1:
            raise ValueError("snapshot_every must be a positive number of events")
        previous = tuple(previous)
        for each in (chart, *previous):
            problems = chart_problems(each.ir)
            if problems:
                raise IdentifierBoundError("; ".join(problems))
        self.clock = wall_clock_ms if clock is None else clock
        self.timer_problems: dict[TimerKey, str] = {}
        """Stored timer rows `fire_due` found not to fit, and why: skipped from then on."""
        self.chart = chart
        self.store = store
        self.snapshot_every = snapshot_every
        previous = tuple(previous)
        refuse_changed_version(store, (chart, *previous))  # a version is one digest
        self.charts = ChartSet(chart, previous, store)
        self._chart_key = _key(chart)
        self._rows = RowCache()
        self._keys: dict[str, ChartKey] = {}
        if store.read_only:  # `open_read_only_store`: reads and dry runs only, no registration
            return
        known = {row.digest: row for row in store.charts()}
        row = known.get(chart.digest)
        if row is None or (row.source is None and chart.source is not None):
            store.register_chart(chart.digest, chart.name, chart.version, chart.source)

    # ---- instances ---------------------------------------------------------------------
    def create(
        self,
        instance_id: str,
        context: Mapping[str, Any] | None = None,
        *,
        exist_ok: bool = False,
    ) -> Instance:
        """Create an instance at version 0 in the chart's initial state (`context` overrides
        declared defaults); messages emitted on entry go to the outbox. Raises
        `InstanceExistsError` unless `exist_ok`, `StartError` for a bad context."""
        check_instance_id(instance_id)
        now_ms = self.now_ms()
        result = self.chart.initialize(context, event_id=START_EVENT, now_ms=now_ms)
        columns = state_columns(result.state)
        now = time.time()
        initial_context = canonical_json(dict(context or {}))
        state, version = result.state, 0
        built: State | None = state  # the state `columns` were built from
        with self.store.write():
            created = self.store.insert_instance(
                instance_id,
                chart=self._chart_key,
                columns=columns,
                initial_context=initial_context,
                now=now,
                start_clock_ms=now_ms,
            )
            if created and result.emitted:
                self.store.insert_outbox(outbox_rows(instance_id, 0, result.emitted, now))
            if created and state.timers:
                self.store.insert_timers([timer_row(instance_id, t, 0) for t in state.timers])
            row = InstanceRow(
                instance_id=instance_id,
                chart_name=self.chart.name,
                chart_version=self.chart.version,
                chart_digest=self.chart.digest,
                version=0,
                columns=columns,
                initial_context=initial_context,
                start_clock_ms=now_ms,
            )
            if created and result.sent:  # the creation's undelayed sends, in order
                tx = InstanceTransaction(
                    self.chart, row, state, snapshot_every=self.snapshot_every, now=now,
                    now_ms=now_ms, built=built,
                )  # fmt: skip
                tx.queue_sends(START_EVENT, result)
                self.decide_sends(tx)
                tx.flush(self.store, self._chart_key)
                state, version, row, built = tx.state, tx.version, tx.committed_row(), tx.built
        if not created:
            if exist_ok:
                return self.load(instance_id)
            raise InstanceExistsError(f"instance {instance_id!r} already exists")
        self._rows.put(row, state, built)
        return Instance(
            instance_id=instance_id,
            version=version,
            state=state,
            chart_name=self.chart.name,
            chart_version=self.chart.version,
            chart_digest=self.chart.digest,
        )

    def load(self, instance_id: str) -> Instance:
        """The stored instance (UnknownInstanceError, ChartVersionError, CorruptRowError)."""
        row = self.store.instance(instance_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        state = self._state(row)
        return Instance(
            instance_id=instance_id,
            version=row.version,
            state=state,
            chart_name=row.chart_name,
            chart_version=row.chart_version,
            chart_digest=row.chart_digest,
        )

    def history(self, instance_id: str) -> list[RecordedEvent]:
        """The accepted events of an instance, in order."""
        with self.store.read():
            if self.store.instance(instance_id) is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            rows = self.store.events(instance_id)
        where = f"instance {instance_id!r} event"
        return [
            RecordedEvent(
                sequence=r.sequence,
                event_id=r.event_id,
                type=r.type,
                payload=loads(r.payload, f"{where} #{r.sequence} payload"),
                payload_sha256=r.payload_sha256,
                status=r.status,
                chart_version=r.chart_version,
                evidence=stored_evidence(r.evidence, r.event_id, f"{where} #{r.sequence} evidence"),
                recorded_at=r.recorded_at,
                idempotency_key=r.idempotency_key,
                clock_ms=r.clock_ms,
            )
            for r in rows
        ]

    # ---- events ------------------------------------------------------------------------
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
        """Apply one event in one transaction and classify the attempt (see `Outcome`).

        `expected_version`: apply only if the instance is still at this version
        (else VERSION_CONFLICT; never retried here). `sequence`: the producer's
        position of the event in the instance's history (must be version + 1).
        `after_conflict`: the conflict this attempt re-decides after; it is
        recorded in the stored evidence or audit row and in the outcome.
        Installed observers (`statekit.engine.observers`) see the step once it is
        committed, with the instance ID; one that another thread installs while this
        call runs may see its step as decided, before the commit.
        """
        check_instance_id(instance_id)
        command = make_command(event_id, type, payload, expected_version, sequence, after_conflict)
        now_ms: int | None = None
        cached = self._rows.writable(instance_id)
        if cached is not None:
            try:
                if not observers.installed:
                    # Nobody to hold steps for or to tell the instance (the usual case):
                    # without the two scopes, which cost as much as a statement here.
                    return self._apply_cached(cached, command, None)
                held: list[observers.Notification] = []
                with observers.instance_scope(instance_id), observers.holding(held):
                    outcome = self._apply_cached(cached, command, held)
                observers.deliver(held)
                return outcome
            except _Stale as stale:  # nothing written: its steps are not delivered
                self._rows.stale(instance_id)
                now_ms = stale.now_ms
        with observers.instance_scope(instance_id):
            return self._apply_read(instance_id, command, now_ms)

    def _apply_cached(
        self, cached: Cached, command: Command, held: list[observers.Notification] | None
    ) -> Outcome:
        """`apply` on the row this runner holds, reading nothing when the command and its
        sends are accepted (see `runner.row_cache`); `_Stale`, with nothing written,
        when the database finds the row stale or records more about an event. A
        command not accepted (a rejection, a conflict) is decided again on the rows
        read, in the same transaction: what it reports must come from the stored row
        (the steps of the decision taken back are dropped from `held`, the observer
        notifications the caller delivers once this transaction committed; None when
        no observer is installed)."""
        row = cached.row
        with self.store.write():
            now_ms = self.now_ms()
            tx = InstanceTransaction(
                self._chart_of(row), row, cached.state, snapshot_every=self.snapshot_every,
                now=time.time(), now_ms=now_ms, built=cached.built,
            )  # fmt: skip
            outcome = tx.decide(command, tx.local_facts(command))
            sent: list[Outcome] = []
            accepted = bool(tx.events)
            for c in tx.sends() if accepted else ():
                sent.append(tx.decide(c, tx.local_facts(c)))
                if len(tx.events) != len(sent) + 1:
                    accepted = False
                    break
            if not accepted:
                if held is not None:
                    held.clear()
                return self._read_and_decide(row.instance_id, command, now_ms)
            self.store.reach(DECIDED)
            try:
                written = tx.write(self.store, self._chart_keys(tx.chart), unread=True, last=True)
            except Exception as exc:
                if not row_error(exc):
                    raise
                written = False
            if not written:
                raise _Stale(now_ms)
        self._rows.put(tx.committed_row(), tx.state, tx.built)
        return replace(outcome, sent=tuple(sent)) if sent else outcome

    def _apply_read(self, instance_id: str, command: Command, now_ms: int | None) -> Outcome:
        """`apply` reading the instance row (locked) and the record of the event ID first."""
        with self.store.write():
            return self._read_and_decide(instance_id, command, now_ms)

    def _read_and_decide(self, instance_id: str, command: Command, now_ms: int | None) -> Outcome:
        """Inside a write transaction: read the instance row (locked) and the record of the
        event ID, decide, write; the row is remembered as committed (if the caller's
        transaction does not commit, the version check finds it stale)."""
        row = self.store.instance(instance_id, command.event_id, lock=True)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        self._rows.read(row)
        self.store.reach(LOCKED)
        tx = self._transaction(row, now_ms)
        outcome = tx.decide(command, read_facts(self.store, tx, command, row.recorded))
        sent = self.decide_sends(tx)
        self.store.reach(DECIDED)
        tx.flush(self.store, self._chart_keys(tx.chart), last=True)
        if tx.events:
            self._rows.put(tx.committed_row(), tx.state, tx.built)
        return replace(outcome, sent=tuple(sent)) if sent else outcome

    def apply_batch(self, instance_id: str, commands: Iterable[Command]) -> list[Outcome]:
        """Apply many events of one instance in ONE transaction (an import): each is
        classified as `apply` would, in order, against the state the previous ones
        left; all rows are written together, with a single instance update."""
        check_instance_id(instance_id)
        checked = [
            make_command(
                c.event_id,
                c.type,
                c.payload,
                expected_version=c.expected_version,
                sequence=c.sequence,
                after_conflict=c.after_conflict,
            )
            for c in commands
        ]
        with self.store.write(), observers.instance_scope(instance_id):
            row = self.store.instance(instance_id, lock=True)
            if row is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            self.store.reach(LOCKED)
            tx = self._transaction(row)
            outcomes = []
            for c in checked:
                outcome = tx.decide(c, self._facts(tx, c))
                sent = self.decide_sends(tx)
                outcomes.append(replace(outcome, sent=tuple(sent)) if sent else outcome)
            self.store.reach(DECIDED)
            tx.flush(self.store, self._chart_keys(tx.chart), last=True)
        if tx.events:
            self._rows.put(tx.committed_row(), tx.state, tx.built)
        return outcomes

    def apply_many(self, commands: Iterable[tuple[str, Command]]) -> list[Item]:
        """Apply events of many instances, `(instance ID, command)` each, in ONE write
        transaction (group commit: one durable commit for all; see
        `runner.group_commit`). Each command gets what `apply` would give it, in
        order: its `Outcome` (two events of one instance see each other in the order
        given), or the exception `apply` would raise for it (a ValueError for a bad
        command, UnknownInstanceError, ChartVersionError, CorruptRowError, or the
        database's own error for a row it refuses), and each event is all-or-nothing
        on its own: one that fails leaves the others to commit. A busy, full or
        damaged store (`StoreBusyError`, `StoreFailure`) raises, and nothing of the
        batch is committed."""
        checked: list[tuple[str, Command | Exception]] = []
        for instance_id, c in commands:
            try:
                check_instance_id(instance_id)
                command: Command | Exception = make_command(
                    c.event_id,
                    c.type,
                    c.payload,
                    expected_version=c.expected_version,
                    sequence=c.sequence,
                    after_conflict=c.after_conflict,
                )
            except ValueError as exc:
                command = exc
            checked.append((instance_id, command))
        work = GroupWork(
            transaction=self._transaction,
            decide=self._decide,
            chart_key=lambda tx: self._chart_keys(tx.chart),
        )
        items, accepted = run_group(self.store, work, checked)
        for tx in accepted:
            self._rows.put(tx.committed_row(), tx.state, tx.built)
        return items

    def migrate(self, instance_id: str, *, dry_run: bool = False) -> MigrationReport:
        """Move an instance of an earlier version of the chart to this runner's version, in
        one transaction, writing a migration entry to its history (see
        `runner.migration`); idempotent (an instance already on this version is
        `CURRENT`). A state that does not map is `STRANDED` and nothing is written;
        `dry_run` writes nothing either and says `WOULD_MIGRATE`. An instance on a
        newer version, or on one this runner cannot find, is a ChartVersionError."""
        check_instance_id(instance_id)
        with self.store.read() if dry_run else self.store.write():
            row = self.store.instance(instance_id, lock=not dry_run)
            if row is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            old = self._chart_of(row)
            before = self._state(row)
            configuration = tuple(before.to_data()["configuration"])
            report = MigrationReport(
                instance_id=instance_id,
                status="CURRENT",
                from_version=old.version,
                to_version=self.chart.version,
                configuration=configuration,
            )
            if old.digest == self.chart.digest:
                return report
            try:
                mapped = map_state(before, old, self.chart)
            except Stranded as exc:
                return replace(report, status="STRANDED", reason=str(exc))
            after = mapped.state
            report = replace(
                report,
                status="WOULD_MIGRATE" if dry_run else "MIGRATED",
                mapped_configuration=tuple(after.to_data()["configuration"]),
                mapping=mapped.mapping,
                state_sha256_before=state_sha256(before),
                state_sha256_after=state_sha256(after),
            )
            if dry_run:
                return report
            now = time.time()
            version = row.version + 1
            payload = entry_payload(old.version, self.chart.version, mapped.mapping)
            encoded = encode_payload(MIGRATE_TYPE, payload)
            self.store.insert_events(
                [
                    EventRow(
                        instance_id=instance_id,
                        sequence=version,
                        event_id=migration_event_id(old.version, self.chart.version),
                        type=MIGRATE_TYPE,
                        payload=encoded.text,
                        payload_sha256=encoded.sha256,
                        status="APPLIED",
                        chart_version=self.chart.version,
                        evidence=entry_evidence(before, after, old, self.chart, mapped),
                        recorded_at=now,
                    )
                ]
            )
            columns = state_columns(after)
            moved = self.store.update_instance(
                instance_id,
                read_version=row.version,
                new_version=version,
                chart=self._chart_key,
                columns=columns,
                now=now,
            )
            if not moved:
                raise RuntimeError(f"instance {instance_id!r} moved during its own migration")
            if mapped.timer_ids or mapped.retimed or mapped.dropped_timers:
                self._move_timer_rows(instance_id, after, mapped)
            if self.snapshot_every and version % self.snapshot_every == 0:
                self.store.insert_snapshot(snapshot_row(instance_id, version, after, now))
        self._rows.put(
            replace(
                row,
                chart_name=self.chart.name,
                chart_version=self.chart.version,
                chart_digest=self.chart.digest,
                version=version,
                columns=columns,
                recorded=None,
            ),
            after,
        )
        return replace(report, sequence=version)

    def _move_timer_rows(self, instance_id: str, after: State, mapped: Mapped) -> None:
        """Replace the rows of the timers a migration renamed (old ID → new ID) or re-timed
        with rows of the mapped state's timers, keeping the sequence that armed them (and
        their generation), and delete the rows of the timers it dropped."""
        timer_ids = {**{t: t for t in mapped.retimed}, **mapped.timer_ids}
        gone = sorted({*timer_ids, *mapped.dropped_timers})
        armed_by = {
            r.timer_id: r.sequence
            for r in self.store.timers(instance_id)
            if r.timer_id in timer_ids and type(r.sequence) is int
        }
        self.store.delete_timers(instance_id, gone)
        moved = {new: armed_by.get(old, 0) for old, new in timer_ids.items()}
        self.store.insert_timers(
            [timer_row(instance_id, t, moved[t.id]) for t in after.timers if t.id in moved]
        )

    def rejections(self, instance_id: str) -> list[dict[str, Any]]:
        """The audited rejections, history conflicts and duplicates of a fact (by
        idempotency key) of an instance, oldest first."""
        return [
            {
                "event_id": r.event_id,
                "type": r.type,
                "payload": loads(r.payload, f"rejection payload of {r.event_id!r}"),
                "status": r.status,
                "reason": r.reason,
                "message": r.message,
                "version": r.version,
                "detail": loads(r.detail, f"rejection detail of {r.event_id!r}"),
                "recorded_at": r.recorded_at,
            }
            for r in self.store.rejections(instance_id)
        ]

    def snapshot(self, instance_id: str) -> int:
        """Store a snapshot of the instance's current state; return its through-sequence."""
        with self.store.write():
            row = self.store.instance(instance_id, lock=True)
            if row is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            state = self._state(row)
            self.store.insert_snapshot(snapshot_row(instance_id, row.version, state, time.time()))
        return row.version

    def rebuild(self, instance_id: str) -> Rebuilt:
        """The state rebuilt from the newest valid snapshot plus the later events (refused
        snapshots are reported in `Rebuilt.refused`)."""
        return rebuild(self.store, self.charts, instance_id)

    def verify(self, instance_id: str) -> VerifyReport:
        """Replay the whole history and compare it with the stored state, outbox and
        snapshots; report every difference without choosing a side."""
        return verify(self.store, self.charts, instance_id)

    # ---- time --------------------------------------------------------------------------
    def fire_due(self, now_ms: int | None = None, limit: int = 1000) -> list[Outcome]:
        """Deliver up to `limit` timers of this chart's instances due at `now_ms` (default:
        the clock), earliest first, each in the transaction of its instance (see
        `runner.timer_firing`); return their outcomes (`Outcome.instance_id` says whose).
        A timer is never delivered before its due time, and a second delivery of one
        (another worker, a retry after a crash) is ALREADY_APPLIED. A stored timer row
        that does not fit its instance is recorded in `timer_problems` and skipped."""
        at = self.now_ms() if now_ms is None else now_ms
        check_stored_int(at, "now_ms")
        return fire_due(self, at, limit)

    def now_ms(self) -> int:
        """The clock's reading (TypeError unless it is an int of the stored range)."""
        value = self.clock()
        if type(value) is not int:
            raise TypeError(f"the runner's clock gave {value!r}, not epoch milliseconds (an int)")
        check_stored_int(value, "the clock's reading")
        return value

    def _settle(self, tx: InstanceTransaction) -> None:
        """Write what `tx` decided (inside the caller's transaction); remember its row (the
        stored row once the caller commits; if it does not, the version check finds the
        cached row stale)."""
        tx.flush(self.store, self._chart_keys(tx.chart))
        if tx.events:
            self._rows.put(tx.committed_row(), tx.state, tx.built)

    def _decide(
        self, tx: InstanceTransaction, command: Command, known: LookedUp | None = None
    ) -> Outcome:
        """One command decided in `tx` as `apply` decides it, its undelayed sends after it
        (`known`: where the batch's event IDs are recorded, looked up together)."""
        outcome = tx.decide(command, self._facts(tx, command, known))
        sent = self.decide_sends(tx)
        return replace(outcome, sent=tuple(sent)) if sent else outcome

    def decide_sends(self, tx: InstanceTransaction) -> list[Outcome]:
        """Decide the undelayed sends `tx` queued, in order, each as an event of its own
        (those they send in turn join the queue); their outcomes."""
        return [tx.decide(c, self._facts(tx, c)) for c in tx.sends()]

    # ---- internals ---------------------------------------------------------------------
    def _transaction(self, row: InstanceRow, now_ms: int | None = None) -> InstanceTransaction:
        """The decisions about the locked instance `row`, starting from its stored state."""
        return InstanceTransaction(
            self._chart_of(row),
            row,
            self._state(row),
            snapshot_every=self.snapshot_every,
            now=time.time(),
            now_ms=self.now_ms() if now_ms is None else now_ms,
        )

    def _facts(
        self, tx: InstanceTransaction, command: Command, known: LookedUp | None = None
    ) -> HistoryFacts:
        """What deciding `command` needs from the history (its event ID looked up, unless
        `known` did already)."""
        recorded = tx.recorded_here(command.event_id)
        if recorded is None:
            pair = (tx.instance_id, command.event_id)
            if known is not None and pair in known.asked:
                recorded = known.found.get(pair)
            else:
                recorded = self.store.recorded_event(*pair)
        return read_facts(self.store, tx, command, recorded)

    def _state(self, row: InstanceRow) -> State:
        """The row's state; parsed once per distinct stored text (rows are immutable per
        version, and equal text gives an equal state)."""
        state = self._rows.state_for(row)
        if state is None:
            state = state_of(self._chart_of(row), row)
            self._rows.put(replace(row, recorded=None) if row.recorded else row, state)
        return state

    def _chart_keys(self, chart: Chart) -> ChartKey:
        """The key rows record for `chart` (built once per chart)."""
        key = self._keys.get(chart.digest)
        if key is None:
            key = self._keys[chart.digest] = _key(chart)
        return key

    def _chart_of(self, row: InstanceRow) -> Chart:
        """The chart of the version the instance runs on: this runner's, an older one it
        was given or the store kept, else this runner's (then `state_of` says why it
        does not fit)."""
        if row.chart_digest == self.chart.digest or row.chart_name != self.chart.name:
            return self.chart
        if isinstance(row.chart_version, int) and row.chart_version < self.chart.version:
            older = self.charts.get(row.chart_version)
            if older is not None and older.digest == row.chart_digest:
                return older
        return self.chart


class _Stale(Exception):
    """The cached row is not the stored one, or the store records more about a command
    than the cache assumed (nothing was written: decide again on the rows read, with
    the same clock reading `now_ms`)."""

    def __init__(self, now_ms: int) -> None:
        super().__init__(now_ms)
        self.now_ms = now_ms


def _key(chart: Chart) -> ChartKey:
    return ChartKey(name=chart.name, version=chart.version, digest=chart.digest)

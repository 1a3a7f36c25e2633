"""`Runner`: read → `chart.send` (pure) → write, one database transaction per event.

    runner = statekit.Runner(statekit.load("machines/task.yaml"), store)
    runner.create("task-42")
    o = runner.apply("task-42", "evt-1", "TaskStarted", {...}, expected_version=0)
    o.status, o.reason, o.version, o.state

Every way of applying (`apply`, `apply_batch`, `apply_many`, `fire_due`) is one
decide-and-write pipeline, `runner.write_path` over the stages of
`runner.write_stages`, which differ only in how the instance rows are had (the
row this runner committed last, locked, or claimed with due timers), how many
commands one transaction decides and what commits together; the methods here
check their input and call it. `apply` opens one write transaction (the store's
locking: see `store.sqlite` and `store.postgres`), reads the instance and the
record of the event ID, classifies (`transaction.InstanceTransaction`), and for an
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
`runner.migration`; its transaction: `runner.migration_transaction`).

Time (`runner.timers`): every transaction reads the runner's clock once
(`clock`, epoch milliseconds; the wall clock by default) and passes it to the
engine as `now_ms`, so relative delays become due times, and each event row
records the reading. Timer rows are written and deleted with the event that
armed, cancelled or delivered them. An event's undelayed sends are applied
right after it, in the same transaction, each as an event of its own
(`statekit.send/<event ID>/<n>`); one the chart rejects is audited like any
rejection and the events before it still commit. `fire_due` delivers the
timers that are due.

In the application's transaction (`in_transaction`, `runner.in_transaction`): the same
pipeline over a store on the application's connection, one savepoint per call, the
instance always read locked, the commit the application's.

Accepted events are those the chart APPLIED or classified ALREADY_APPLIED
(an `already` entry): both claim their event ID and their sequence, so a
redelivery is recognised and a producer's stream stays contiguous; the latter
changes no state and emits nothing.

Reading back: `history` and `rejections` (`runner.history_reads`), `verify`
(`runner.verify`), `rebuild` and `snapshot` (`runner.snapshots`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import START_EVENT, Chart
from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet, refuse_changed_version
from statekit.runner.command_checks import check_instance_id, check_stored_int, make_command
from statekit.runner.errors import IdentifierBoundError, InstanceExistsError, UnknownInstanceError
from statekit.runner.family_charts import FamilyCharts
from statekit.runner.family_path import create_in_family
from statekit.runner.family_verify import verify_member
from statekit.runner.group_commit import Item
from statekit.runner.history_reads import recorded_history, recorded_rejections
from statekit.runner.identifier_bounds import chart_problems
from statekit.runner.in_transaction import in_transaction
from statekit.runner.instance import Instance, RecordedEvent
from statekit.runner.message_delivery import Delivery, deliver_messages
from statekit.runner.migration import MigrationReport
from statekit.runner.migration_transaction import migrate_instance
from statekit.runner.outcome import Conflict, Outcome
from statekit.runner.retrying import healing, resolve_create, resolve_decided, resolve_firing
from statekit.runner.row_cache import RowCache
from statekit.runner.snapshots import Rebuilt, rebuild, snapshot_row
from statekit.runner.store.base import Store
from statekit.runner.store.rows import InstanceRow
from statekit.runner.stored_state import state_columns
from statekit.runner.timer_firing import TimerKey
from statekit.runner.timer_parking import park_timer
from statekit.runner.timers import timer_row
from statekit.runner.transaction import (
    Command,
    InstanceTransaction,
    outbox_rows,
)
from statekit.runner.verify import VerifyReport
from statekit.runner.write_path import WritePath
from statekit.runner.write_stages import chart_key


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
    `charts` are the other charts it runs instances of: invoked children's, and those of
    the instances it delivers messages to (`family_charts`).
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
        charts: Iterable[Chart] = (),
    ) -> None:
        if snapshot_every is not None and snapshot_every < 1:
            raise ValueError("snapshot_every must be a positive number of events")
        previous, others = tuple(previous), tuple(charts)
        for each in (chart, *previous, *others):
            problems = chart_problems(each.ir)
            if problems:
                raise IdentifierBoundError("; ".join(problems))
        self.clock = wall_clock_ms if clock is None else clock
        self.timer_problems: dict[TimerKey, str] = {}
        """Stored timer rows `fire_due` found not to fit, and why: skipped from then on."""
        self.chart = chart
        self.store = store
        previous = tuple(previous)
        refuse_changed_version(store, (chart, *previous, *others))  # a version is one digest
        self.charts = ChartSet(chart, previous, store)
        self._chart_key = chart_key(chart)
        self._path = WritePath(
            store, chart, self.charts, snapshot_every=snapshot_every, now_ms=self.now_ms,
            family=FamilyCharts(others, store),
        )  # fmt: skip
        self.message_problems: dict[int, str] = {}
        """Messages between instances `deliver_messages` left pending, and why."""
        if store.read_only:  # `open_read_only_store`: reads and dry runs only, no registration
            return
        known = {row.digest: row for row in store.charts()}
        for each in (chart, *others):
            row = known.get(each.digest)
            if row is None or (row.source is None and each.source is not None):
                store.register_chart(each.digest, each.name, each.version, each.source)

    @property
    def composes(self) -> bool:
        """Whether this runner's steps are family steps (its chart or one it was given
        invokes a chart or sends to another instance: `runner.family_path`)."""
        return self._path.families

    # ---- instances ---------------------------------------------------------------------
    @healing(resolve_create)
    def create(
        self,
        instance_id: str,
        context: Mapping[str, Any] | None = None,
        *,
        exist_ok: bool = False,
    ) -> Instance:
        """Create an instance at version 0 in the chart's initial state (`context` overrides
        declared defaults); messages emitted on entry go to the outbox. Raises
        `InstanceExistsError` unless `exist_ok`, `StartError` for a bad context,
        `FamilyBoundError` (nothing created) when the family step of a chart that invokes
        passes its bound of deliveries."""
        check_instance_id(instance_id)
        if self._path.families:  # its initial states' children start with it
            if create_in_family(self._path, instance_id, context) is None and not exist_ok:
                raise InstanceExistsError(f"instance {instance_id!r} already exists")
            return self.load(instance_id)
        now_ms = self.now_ms()
        result = self.chart.initialize(
            context, event_id=START_EVENT, now_ms=now_ms, instance_id=instance_id
        )
        columns = state_columns(result.state)
        now = time.time()
        initial_context = canonical_json(dict(context or {}))
        state, version = result.state, 0
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
                    now_ms=now_ms,
                )  # fmt: skip
                tx.queue_sends(START_EVENT, result)
                self.decide_sends(tx)
                tx.flush(self.store, self._chart_key)
                state, version, row = tx.state, tx.version, tx.committed_row()
        if not created:
            if exist_ok:
                return self.load(instance_id)
            raise InstanceExistsError(f"instance {instance_id!r} already exists")
        self._rows.put(row, state)
        return Instance(
            instance_id=instance_id,
            version=version,
            state=state,
            chart_name=self.chart.name,
            chart_version=self.chart.version,
            chart_digest=self.chart.digest,
        )

    @healing()
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

    @healing()
    def history(self, instance_id: str) -> list[RecordedEvent]:
        """The accepted events of an instance, in order; after the snapshot its events were
        pruned to, when they were (`statekit.runner.retention`)."""
        return recorded_history(self.store, instance_id)

    # ---- events ------------------------------------------------------------------------
    @healing(resolve_decided)
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
        return self._path.apply(instance_id, command)

    @healing(resolve_decided)
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
        return self._path.apply_batch(instance_id, checked)

    @healing(resolve_decided)
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
        return self._path.apply_many(checked)

    @healing()
    def migrate(self, instance_id: str, *, dry_run: bool = False) -> MigrationReport:
        """Move an instance of an earlier version of the chart to this runner's version, in
        one transaction, writing a migration entry to its history (see
        `runner.migration`); idempotent (an instance already on this version is
        `CURRENT`). A state that does not map is `STRANDED` and nothing is written;
        `dry_run` writes nothing either and says `WOULD_MIGRATE`. An instance on a
        newer version, or on one this runner cannot find, is a ChartVersionError."""
        check_instance_id(instance_id)
        return migrate_instance(self._path, instance_id, dry_run=dry_run)

    @healing()
    def rejections(self, instance_id: str) -> list[dict[str, Any]]:
        """The audited rejections, history conflicts and duplicates of a fact (by
        idempotency key) of an instance, oldest first."""
        return recorded_rejections(self.store, instance_id)

    @healing()
    def snapshot(self, instance_id: str) -> int:
        """Store a snapshot of the instance's current state; return its through-sequence."""
        with self.store.write():
            row = self.store.instance(instance_id, lock=True)
            if row is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            state = self._state(row)
            self.store.insert_snapshot(snapshot_row(instance_id, row.version, state, time.time()))
        return row.version

    @healing()
    def rebuild(self, instance_id: str) -> Rebuilt:
        """The state rebuilt from the newest valid snapshot plus the later events (refused
        snapshots are reported in `Rebuilt.refused`)."""
        return rebuild(self.store, self.charts, instance_id)

    @healing()
    def verify(self, instance_id: str) -> VerifyReport:
        """Replay the whole history and compare it with the stored state, outbox and
        snapshots, and its family links with its own and its parent's and children's
        histories (`family_verify`); report every difference without choosing a side."""
        return verify_member(self.store, self.charts, self._path.chart_set, instance_id)

    def in_transaction(self, connection: object) -> AbstractContextManager[Runner]:
        """A context manager yielding this runner writing on the application's `connection`
        (sqlite3, psycopg 3, SQLAlchemy `Connection` or ORM `Session`), in the transaction
        the application opened and commits: `create`, `apply` and the rest write there,
        one savepoint each (see `runner.in_transaction` and docs/transactions.md)."""
        return in_transaction(self, connection)

    # ---- time --------------------------------------------------------------------------
    @healing(resolve_firing)
    def fire_due(self, now_ms: int | None = None, limit: int = 1000) -> list[Outcome]:
        """Deliver up to `limit` timers of this chart's instances due at `now_ms` (default:
        the clock), earliest first, each in the transaction of its instance (see
        `runner.timer_firing`); return their outcomes (`Outcome.instance_id` says whose).
        A timer is never delivered before its due time, and a second delivery of one
        (another worker, a retry after a crash) is ALREADY_APPLIED. A stored timer row
        that does not fit its instance is recorded in `timer_problems` and skipped."""
        at = self.now_ms() if now_ms is None else now_ms
        check_stored_int(at, "now_ms")
        return self._path.fire_due(at, limit, self.timer_problems)

    @healing()
    def park_timer(self, instance_id: str, timer_id: str, generation: int) -> Outcome:
        """Park an eventless loop's timer durably (`runner.loop_parking`): consumed and
        recorded as REJECTED `TIMER_LOOP`, or `STALE_TIMER` when no longer armed so
        (ValueError: not due yet)."""
        return park_timer(self._path, instance_id, timer_id, generation, self.now_ms())

    @healing()
    def deliver_messages(self, limit: int = 100) -> list[Delivery]:
        """Deliver up to `limit` pending messages between instances, each in its own
        transaction, exactly once, in order per sender (`runner.message_delivery`)."""
        return deliver_messages(self._path, limit, self.message_problems)

    def now_ms(self) -> int:
        """The clock's reading (TypeError unless it is an int of the stored range)."""
        value = self.clock()
        if type(value) is not int:
            raise TypeError(f"the runner's clock gave {value!r}, not epoch milliseconds (an int)")
        check_stored_int(value, "the clock's reading")
        return value

    def decide_sends(self, tx: InstanceTransaction) -> list[Outcome]:
        """Decide the undelayed sends `tx` queued, in order, each as an event of its own
        (those they send in turn join the queue); their outcomes."""
        return self._path.decide_sends(tx)

    @property
    def snapshot_every(self) -> int | None:
        """Store a snapshot in the same transaction as every Nth event (None: never)."""
        return self._path.snapshot_every

    @snapshot_every.setter
    def snapshot_every(self, every: int | None) -> None:
        self._path.snapshot_every = every

    # ---- internals ---------------------------------------------------------------------
    @property
    def _rows(self) -> RowCache:
        """The rows this runner committed last (the write path's; `retrying` replaces it
        after a lost connection: what it believed stored may not be)."""
        return self._path.rows

    @_rows.setter
    def _rows(self, rows: RowCache) -> None:
        self._path.rows = rows

    @property
    def _answer(self) -> object:
        """What the transaction under way answers once committed (`retrying`)."""
        return self._path.answer

    @_answer.setter
    def _answer(self, answer: object) -> None:
        self._path.answer = answer

    def _state(self, row: InstanceRow) -> State:
        """The row's state (parsed once per distinct stored text: `WriteStages.state_of`)."""
        return self._path.state_of(row)

    def _chart_of(self, row: InstanceRow) -> Chart:
        """The chart of the version the instance runs on (`WriteStages.chart_of`)."""
        return self._path.chart_of(row)

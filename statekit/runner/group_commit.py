"""Group commit: many events of many instances in one write transaction (`Runner.apply_many`).

When every commit waits for the disk (fsync), one transaction per event caps a
process at the disk's commit rate whatever the code does; committing a batch
of events together pays that wait once. Each event is still all-or-nothing
on its own and is decided exactly as `Runner.apply` decides it: the
instances a batch names are read and locked once each, in sorted order (so
two batches that name the same instances lock them in one order and never
deadlock), and the events of one instance are decided in the order given,
each against the state the previous ones left. Where the commands' event IDs
are recorded is looked up for the whole batch at once (`Store.recorded_events`,
a few statements instead of one per command).

Writing goes in two ways. First, the rows of every event are written
together after all are decided (one statement per table and instance, far
fewer round trips). If the database refuses any of those rows (a constraint
the decisions could not foresee, such as a row written behind the runner's
back), the whole transaction is rolled back and the batch is decided again
with a savepoint around each event: an event whose rows are refused is
rolled back to its savepoint alone (with the timer rows and the undelayed sends
it caused, which go with their event), reported by the database's error, and
the others commit. A store that is busy, full or damaged (`StoreBusyError`,
`StoreFailure`), or a lost connection (`TransactionInterrupted`, which the runner
retries: `runner.retrying`), ends the batch with nothing of it committed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from statekit.engine import observers
from statekit.runner.errors import (
    ChartVersionError,
    CorruptRowError,
    StoreBusyError,
    StoreFailure,
    UnknownInstanceError,
)
from statekit.runner.outcome import Outcome
from statekit.runner.store.base import Store
from statekit.runner.store.connection_policy import TransactionInterrupted
from statekit.runner.store.hold_points import DECIDED, LOCKED
from statekit.runner.store.rows import (
    DecidedRows,
    EventRow,
    NewOutboxRow,
    RejectionRow,
    SnapshotRow,
    TimerRow,
)
from statekit.runner.transaction import Command, InstanceTransaction, LookedUp, Mark
from statekit.runner.write_stages import WriteStages

Item = Outcome | Exception
"""What `apply_many` gives for one command: the `Outcome` `apply` would return, or the
exception `apply` would raise for it."""

_FATAL = (StoreBusyError, StoreFailure, TransactionInterrupted)
_savepoints = itertools.count(1)


class _Refused(Exception):
    """The database refused a row of the bulk write: decide again, one savepoint each."""


def run_group(
    work: WriteStages, commands: Sequence[tuple[str, Command | Exception]]
) -> tuple[list[Item], list[InstanceTransaction]]:
    """Decide and commit `commands` ((instance ID, command or the error checking it
    gave)) through the stages of the write path; return an item per command and the
    transactions that accepted events (their rows to remember)."""
    try:
        return _run(work.store, work, commands, careful=False)
    except _Refused:
        return _run(work.store, work, commands, careful=True)


def _run(
    store: Store,
    work: WriteStages,
    commands: Sequence[tuple[str, Command | Exception]],
    *,
    careful: bool,
) -> tuple[list[Item], list[InstanceTransaction]]:
    items: list[Item] = []
    work.answer = items  # `retrying`: the items, filled in as decided, answer a lost commit
    rows = _Rows()
    with store.write():
        txs = _lock(store, work, {i for i, c in commands if not isinstance(c, Exception)})
        store.reach(LOCKED)
        known = _look_up(store, txs, commands)
        for instance_id, command in commands:
            tx = txs.get(instance_id)
            if isinstance(command, Exception):
                items.append(command)
            elif not isinstance(tx, InstanceTransaction):
                assert tx is not None  # every instance named by a command was read
                items.append(tx)
            elif careful:
                items.append(_careful(store, work, tx, instance_id, command, known))
            else:
                mark = tx.mark()
                with observers.instance_scope(instance_id):
                    items.append(work.decide(tx, command, known))
                rows.add(tx, mark)
        if not careful:
            store.reach(DECIDED)
            rows.write(store, work)
    accepted = [tx for tx in txs.values() if isinstance(tx, InstanceTransaction) and tx.accepted]
    return items, accepted


class _Rows:
    """The rows of a batch's events, in the order decided (so each instance's messages
    keep their order in the outbox), and the instances they move."""

    def __init__(self) -> None:
        self.events: list[EventRow] = []
        self.outbox: list[NewOutboxRow] = []
        self.rejections: list[RejectionRow] = []
        self.snapshots: list[SnapshotRow] = []
        self.moved: dict[int, InstanceTransaction] = {}
        self.timed: dict[int, InstanceTransaction] = {}

    def add(self, tx: InstanceTransaction, mark: Mark) -> None:
        """The rows `tx` queued since `mark` (one command's)."""
        if len(tx.events) > mark.events:
            self.events.extend(tx.events[mark.events :])
            self.moved[id(tx)] = tx
        if tx.state is not tx.start:
            self.timed[id(tx)] = tx
        self.outbox.extend(tx.outbox[mark.outbox :])
        self.rejections.extend(tx.rejections[mark.rejections :])
        self.snapshots.extend(tx.snapshots[mark.snapshots :])

    def write(self, store: Store, work: WriteStages) -> None:
        """Everything in one `Store.write_decided` (one statement per table, one update
        per moved instance; one query on PostgreSQL); `_Refused` when the database
        refuses a row."""
        timers_deleted: list[tuple[str, str]] = []
        timers_inserted: list[TimerRow] = []
        for tx in self.timed.values():  # timer rows, as each instance's flush does
            decided = tx.decided(work.chart_key(tx.chart))
            timers_deleted.extend(decided.timers_deleted)
            timers_inserted.extend(decided.timers_inserted)
        moves = [
            m for tx in self.moved.values() for m in tx.decided(work.chart_key(tx.chart)).moves
        ]
        rows = DecidedRows(
            timers_deleted=tuple(timers_deleted),
            timers_inserted=tuple(timers_inserted),
            events=tuple(self.events),
            moves=tuple(moves),
            outbox=tuple(self.outbox),
            rejections=tuple(self.rejections),
            snapshots=tuple(self.snapshots),
        )
        try:
            written = store.write_decided(rows)
        except _FATAL:
            raise
        except Exception as exc:
            raise _Refused from exc
        if not written:
            raise _Refused


def _lock(
    store: Store, work: WriteStages, instance_ids: set[str]
) -> dict[str, InstanceTransaction | Exception]:
    """Each instance's row read and locked, in sorted order (see the module docstring)."""
    txs: dict[str, InstanceTransaction | Exception] = {}
    for instance_id in sorted(instance_ids):
        row = work.read_locked(instance_id)
        if row is None:
            txs[instance_id] = UnknownInstanceError(f"unknown instance {instance_id!r}")
            continue
        try:
            txs[instance_id] = work.begin(row)
        except (ChartVersionError, CorruptRowError) as exc:
            txs[instance_id] = exc
    return txs


def _look_up(
    store: Store,
    txs: dict[str, InstanceTransaction | Exception],
    commands: Sequence[tuple[str, Command | Exception]],
) -> LookedUp:
    """Where the commands' event IDs are recorded, in a few statements for the batch (the
    rows written later in it are known to their transactions)."""
    asked = [
        (i, c.event_id)
        for i, c in commands
        if not isinstance(c, Exception) and isinstance(txs.get(i), InstanceTransaction)
    ]
    return LookedUp(asked=frozenset(asked), found=store.recorded_events(asked) if asked else {})


def _careful(
    store: Store,
    work: WriteStages,
    tx: InstanceTransaction,
    instance_id: str,
    command: Command,
    known: LookedUp,
) -> Item:
    """One command decided and written inside its own savepoint."""
    name = f"statekit_event_{next(_savepoints)}"
    mark = tx.mark()
    store.execute(f"SAVEPOINT {name}")
    try:
        with observers.instance_scope(instance_id):
            outcome = work.decide(tx, command, known)
        tx.flush(store, work.chart_key(tx.chart))
    except _FATAL:
        raise
    except Exception as exc:
        store.execute(f"ROLLBACK TO SAVEPOINT {name}")
        store.execute(f"RELEASE SAVEPOINT {name}")
        tx.restore(mark)
        return exc
    store.execute(f"RELEASE SAVEPOINT {name}")
    tx.written()
    return outcome

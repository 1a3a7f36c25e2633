"""`Runner.fire_due`: claiming due timer rows and delivering each through the engine.

One write transaction claims a batch of due rows (`Store.claim_due_timers`:
due time ≤ now, earliest first, ties in arming order; on PostgreSQL the rows'
instances are locked with `FOR UPDATE … SKIP LOCKED`, so workers pass over
each other's instances; on SQLite the write lock orders workers), and
delivers them instance by instance, each instance's in order, through one
`InstanceTransaction` (`fire`: the event ID `statekit.timer/<id>/<generation>`,
so a delivery already recorded is ALREADY_APPLIED and changes nothing),
followed by the undelayed sends each delivery makes; then it commits. The
holder of the idempotency key of a delivery's event (earlier in the
transaction, or in the store) is read with it: a delivery repeating a
recorded fact consumes its timer (`InstanceTransaction.fire`) and never meets
the unique index.

A row is delivered only when it fits the instance's state: the state has
that timer armed, with the row's generation, event, payload and due time
(`timers.row_problem`), so a row altered to come due early never fires
early and a row left over never fires at all. A row that does not fit, an
instance that cannot be loaded (unknown chart version, a damaged row), or a
row whose delivery the database still refuses (the last line of defence:
redone one row per transaction to find it) is recorded in the runner's
`timer_problems` with the reason and skipped from then on (a worker reports
it once on standard error): never a crash loop, and the rows behind it
still fire. A row that vanished since it was claimed (cancelled by a writer
that committed first, or delivered by another worker) is passed over quietly.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, replace

from statekit.runner.errors import ChartVersionError, CorruptRowError, UnknownInstanceError
from statekit.runner.outcome import Outcome
from statekit.runner.store.base import Store
from statekit.runner.store.hold_points import LOCKED
from statekit.runner.store.rows import TimerRow
from statekit.runner.timers import row_problem, timer_event_id
from statekit.runner.transaction import InstanceTransaction, LookedUp, delivery_command
from statekit.runner.write_stages import WriteStages, known_from

TimerKey = tuple[str, str, object, object]
"""A stored timer row as the problems remember it: (instance, timer ID, generation, due)."""

BATCH = 32
"""Timers delivered per write transaction (one commit for many deliveries)."""


@dataclass(frozen=True, slots=True)
class _Firing:
    """One `fire_due` call: the write path's stages it goes through and the runner's
    `timer_problems` (rows found not to fit, skipped from then on)."""

    work: WriteStages
    problems: dict[TimerKey, str]

    @property
    def store(self) -> Store:
        return self.work.store


def key_of(row: TimerRow) -> TimerKey:
    """The key a problem about `row` is remembered under."""
    return (row.instance_id, row.timer_id, row.generation, row.due_ms)


def fire_due(
    work: WriteStages, problems: dict[TimerKey, str], now_ms: int, limit: int
) -> list[Outcome]:
    """See the module docstring; the outcomes of the deliveries, in order (`problems`:
    the runner's `timer_problems`, which this adds to)."""
    firing = _Firing(work, problems)
    fired: list[Outcome] = []
    while len(fired) < limit:
        want = min(BATCH, limit - len(fired))
        work.answer = (fired, len(fired))  # `retrying`: the outcomes so far, and before
        try:
            with firing.store.write():
                rows = _claim(firing, now_ms, want)
                firing.store.reach(LOCKED)
                fired.extend(_deliver(firing, rows, now_ms))
        except Exception as exc:
            if not row_error(exc):
                raise
            rows = _peek(firing, now_ms, want)
            fired.extend(_one_by_one(firing, rows, now_ms))
        if len(rows) < want:
            break
    return fired


def _claim(firing: _Firing, now_ms: int, want: int) -> list[TimerRow]:
    """The next `want` due rows that are not known problems (inside the transaction)."""
    problems = firing.problems
    rows = firing.store.claim_due_timers(firing.work.chart.name, now_ms, want + len(problems))
    return [r for r in rows if key_of(r) not in problems][:want]


def _peek(firing: _Firing, now_ms: int, want: int) -> list[TimerRow]:
    """The rows `_claim` would claim, for `_one_by_one` to redo after the database refused
    the batch: claimed in a write transaction that writes nothing (a claim locks its rows
    where the dialect locks them, which a read-only transaction may not)."""
    with firing.store.write():
        problems = firing.problems
        rows = firing.store.claim_due_timers(firing.work.chart.name, now_ms, want + len(problems))
    return [r for r in rows if key_of(r) not in problems][:want]


def _one_by_one(firing: _Firing, rows: list[TimerRow], now_ms: int) -> list[Outcome]:
    """After the database refused a batch: each row in a transaction of its own, a row it
    refuses again recorded as a problem."""
    fired: list[Outcome] = []
    for row in rows:
        try:
            with firing.store.write():
                fresh = [r for r in _claim(firing, now_ms, BATCH) if key_of(r) == key_of(row)]
                fired.extend(_deliver(firing, fresh, now_ms))
        except Exception as exc:
            if not row_error(exc):
                raise
            firing.problems[key_of(row)] = f"the store refused its delivery: {exc}"
    return fired


def _deliver(firing: _Firing, rows: list[TimerRow], now_ms: int) -> list[Outcome]:
    """Deliver claimed rows, instance by instance, inside the caller's transaction."""
    by_instance: dict[str, list[TimerRow]] = {}
    for row in rows:
        by_instance.setdefault(row.instance_id, []).append(row)
    fired: list[Outcome] = []
    for instance_id, group in by_instance.items():
        first = timer_event_id(str(group[0].timer_id), _int(group[0].generation))
        try:
            stored = firing.work.read_locked(instance_id, first)
            if stored is None:
                raise UnknownInstanceError(f"unknown instance {instance_id!r}")
            tx = firing.work.begin(stored, now_ms)
        except (ChartVersionError, CorruptRowError, UnknownInstanceError) as exc:
            _note(firing.problems, group, f"its instance cannot be loaded: {exc}")
            continue
        known = known_from(stored, first)
        for row in group:
            outcome = _fire_one(firing, tx, row, known)
            if outcome is not None:
                fired.append(outcome)
        firing.work.finish(tx)
    return fired


def _fire_one(
    firing: _Firing, tx: InstanceTransaction, row: TimerRow, known: LookedUp | None
) -> Outcome | None:
    """Deliver one claimed row in `tx` (None: passed over, or recorded as a problem)."""
    problem = row_problem(row, tx.start)
    if problem is not None and _vanished(firing.store, row):
        return None  # cancelled or delivered by a transaction that committed first
    if problem is not None:
        firing.problems[key_of(row)] = problem
        return None
    timer = tx.state.timer(row.timer_id)
    if timer is None or timer.generation != row.generation:
        return None  # an earlier delivery in this transaction cancelled it
    command = delivery_command(timer)
    # where its event ID is recorded (read with the lock for the first delivery) and the
    # holder of its event's key (in this transaction or the store), so that a delivery
    # repeating a recorded fact consumes the timer instead of meeting the index
    facts = firing.work.facts(tx, command, known)
    outcome = tx.fire(row.timer_id, row.generation, facts)
    if facts.recorded is not None:
        firing.problems[key_of(row)] = (
            f"{outcome.message}: the row is left over (nothing fires it again)"
        )
    sent = firing.work.decide_sends(tx)
    return _with(outcome, row.instance_id, sent)


def _with(outcome: Outcome, instance_id: str, sent: list[Outcome]) -> Outcome:
    return replace(outcome, instance_id=instance_id, sent=tuple(sent))


def _vanished(store: Store, row: TimerRow) -> bool:
    """Whether the row is gone (or re-armed) when read again, in a fresh statement."""
    return all(
        (r.timer_id, r.generation) != (row.timer_id, row.generation)
        for r in store.timers(row.instance_id)
    )


def _note(problems: MutableMapping[TimerKey, str], rows: list[TimerRow], why: str) -> None:
    for row in rows:
        problems[key_of(row)] = why


def _int(value: object) -> int:
    return value if type(value) is int else -1


def row_error(exc: BaseException) -> bool:
    """Whether the database refused a row (a constraint, a value it cannot hold, an index
    entry over PostgreSQL's size limit), as opposed to failing itself (busy, gone,
    damaged), on either dialect."""
    return any(c.__name__ in _ROW_ERRORS for c in type(exc).__mro__)


_ROW_ERRORS = frozenset({"IntegrityError", "DataError", "ProgramLimitExceeded"})
"""The exception classes (by name, for both drivers) of a row the database refuses."""


def describe_problem(key: TimerKey, why: str) -> str:
    """A problem in words, for a worker's standard error."""
    instance_id, timer_id, generation, due = key
    return (
        f"statekit_timers: instance {instance_id!r} timer {timer_id!r} (generation "
        f"{generation!r}, due {due!r}): {why}; skipped"
    )

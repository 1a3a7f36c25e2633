"""Whole transactions retried after a lost connection or a conflict: `Runner`'s public calls.

The store turns a lost connection into one of two internal errors
(`store.connection_policy`): `NotCommitted` (lost before the COMMIT was sent, or a
conflict the server resolved by rolling the transaction back: 40001, 40P01) and
`CommitUnknown` (lost while the COMMIT was on its way). Every public call of a
`Runner` is wrapped by `healing`, which on either of them forgets the rows the
runner believed stored (`row_cache`) and:

- `NotCommitted`: runs the call again from the start, reading, deciding, writing
  and committing anew. Nothing of the failed attempt is in the database, and a
  decision made again from the database is the decision to make now: event IDs
  are idempotent (a redelivery is ALREADY_APPLIED), versions and sequences are
  checked against the stored row, a timer row is consumed by the transaction that
  delivers it.
- `CommitUnknown`: first reads whether the transaction committed, then answers with
  what it had decided when it did, or runs the call again when it did not. The
  proof is the first history row the transaction wrote, found under its instance and
  event ID with the very `recorded_at` the transaction wrote (no other writer writes
  that instant for it), or, for a transaction that wrote no history row, its first
  audit row (a rejection or conflict) found the same way. So an event whose commit
  landed is answered APPLIED at its sequence (never ALREADY_APPLIED, which a
  second attempt would say), and a rejection whose audit row landed is answered as
  it was, with no second audit row. A transaction that wrote neither (a duplicate,
  a version conflict, a sequence gap: nothing stored) is decided again, which
  gives the same answer.

Per call: `apply` and `apply_batch` answer the outcome(s) decided; `apply_many` each
command's item (one transaction: all of it committed, or none); `fire_due` the
deliveries of the batches committed, those of the batch whose commit landed, and then
fires what is still due (a delivered timer's row is gone, so it is never fired
twice); `create` answers the stored instance when one with its initial context and
chart is there (another writer creating the same ID with the same context in that
instant would be taken for it), else creates again; `migrate` runs again (answering
`CURRENT` when the migration had landed) and `snapshot` again (it replaces the
snapshot it stored). Reads run again.

The decision is remembered for this check in the runner's `_answer` slot, set by
each call just before it sends its COMMIT (one attribute store) and cleared when a
call starts. The retries end when the store's `retry_for` has passed since the
first failure (the store waits for the server within it too, when reconnecting):
then `StoreUnavailableError`, saying when the outcome of the last commit is unknown.
A runner writing in the application's transaction (`Runner.in_transaction`, its store
`borrowed`) retries nothing: the transaction is the application's to run again, so an
interruption raises `TransactionAbortedError`; each of its calls is one savepoint.

On SQLite nothing raises these errors (see `connection_policy`): the wrapper only
passes the call through.

Its cost on the hot path (one more call frame and the `_answer` store, through the
runner's property into the write path's stages, per call; a `try` costs nothing until it
catches), by valgrind's count (`bench/instructions.py --before`, SQLite without fsync):
the merge that brought it with the reconnecting store took a cached `apply` from 504.7 k
to 509.1 k instructions on the `counter` stream (+0.9%) and from 508.6 k to 511.8 k on
`plain` (+0.6%).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.runner.errors import StoreUnavailableError, TransactionAbortedError
from statekit.runner.row_cache import ReadFirst, RowCache
from statekit.runner.store.base import Store
from statekit.runner.store.connection_policy import CommitUnknown, TransactionInterrupted
from statekit.runner.store.rows import DecidedRows

if TYPE_CHECKING:
    from statekit.runner.instance import Instance
    from statekit.runner.outcome import Outcome


class HealingRunner(Protocol):
    """What `healing` needs of a `Runner`."""

    store: Store
    _rows: RowCache
    _answer: object


P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R", bound=HealingRunner)
Resolver = Callable[..., Any]
"""`resolve(runner, interrupted, *args, **kwargs)`: the call's answer when the
interrupted transaction is found committed (or what it committed completes it), None
to run the call again."""


def healing(
    resolve: Resolver | None = None,
) -> Callable[[Callable[Concatenate[R, P], T]], Callable[Concatenate[R, P], T]]:
    """Wrap a `Runner` method so that an interrupted transaction is retried as the module
    docstring says (`resolve`: how an interruption is resolved before running again)."""

    def wrap(method: Callable[Concatenate[R, P], T]) -> Callable[Concatenate[R, P], T]:
        @functools.wraps(method)
        def healed(runner: R, /, *args: P.args, **kwargs: P.kwargs) -> T:
            runner._answer = None
            if runner.store.borrowed:
                return _in_application_transaction(runner, lambda: method(runner, *args, **kwargs))
            try:
                return method(runner, *args, **kwargs)
            except TransactionInterrupted as interrupted:
                return _heal(runner, interrupted, lambda: method(runner, *args, **kwargs),
                             None if resolve is None else
                             lambda i: resolve(runner, i, *args, **kwargs))  # fmt: skip

        return healed

    return wrap


def _heal(
    runner: HealingRunner,
    interrupted: TransactionInterrupted,
    again: Callable[[], T],
    resolve: Callable[[TransactionInterrupted], Any] | None,
) -> T:
    """Resolve `interrupted`, then run the call again until it completes or `retry_for`
    has passed (`StoreUnavailableError`)."""
    deadline = runner.store.policy.deadline()
    pending: TransactionInterrupted | None = interrupted  # not resolved yet
    while True:
        runner._rows = RowCache()  # what it believed stored may not be
        try:
            if pending is not None and resolve is not None:
                answer = resolve(pending)
                if answer is not None:
                    return answer  # type: ignore[no-any-return]
            pending = None
            runner._answer = None
            return again()
        except TransactionInterrupted as failed:
            if pending is None:
                pending = failed
            if not deadline.wait():
                raise _gave_up(runner.store, pending) from failed
        except StoreUnavailableError as away:  # the store waited for the server in vain
            if isinstance(pending, CommitUnknown):
                raise StoreUnavailableError(f"{away}{_UNKNOWN}") from away
            raise


def _in_application_transaction(runner: HealingRunner, call: Callable[[], T]) -> T:
    """A call of a runner writing in the application's transaction
    (`Runner.in_transaction`): never retried, and all or nothing inside that transaction
    (one savepoint of the borrowed store around the whole call, as several of its own
    transactions make one, `fire_due`'s batches); on a failure the rows it remembered
    are forgotten, since its savepoint was rolled back."""
    try:
        with runner.store.write():
            return call()
    except TransactionInterrupted as interrupted:
        runner._rows = ReadFirst()
        raise aborted(interrupted) from interrupted
    except BaseException:
        runner._rows = ReadFirst()
        raise


def aborted(interrupted: TransactionInterrupted) -> TransactionAbortedError:
    """The error an interruption of the application's transaction (`Runner.in_transaction`)
    raises: it cannot commit any more, and the whole transaction is the caller's to run
    again."""
    return TransactionAbortedError(
        f"{interrupted}: the application's transaction cannot commit any more; roll it "
        "back and run the whole transaction again"
    )


_UNKNOWN = (
    "; whether the interrupted transaction's commit took effect is unknown: send its events "
    "again (their event IDs make that safe: one already stored is answered ALREADY_APPLIED)"
)


def _gave_up(store: Store, last: TransactionInterrupted) -> StoreUnavailableError:
    unknown = (
        _UNKNOWN
        if isinstance(last, CommitUnknown)
        else "; nothing of the interrupted transaction was committed"
    )
    return StoreUnavailableError(
        f"{last}; retried for {store.policy.retry_for:g} s{unknown}. Check that the "
        "server at that address is running and accepts connections, or wait longer with "
        "?retry_for=SECONDS in the store URL"
    )


def committed(store: Store, written: tuple[DecidedRows, ...]) -> bool | None:
    """Whether the transaction that wrote `written` committed, read from the database:
    by its first history row, else its first audit row (see the module docstring);
    None when it wrote neither (nothing to tell by, nor to lose)."""
    for rows in written:
        for event in rows.events:
            found = store.execute(
                "SELECT recorded_at FROM statekit_events WHERE instance_id = ? AND event_id = ?",
                (event.instance_id, event.event_id),
            ).fetchone()
            return found is not None and found[0] == event.recorded_at
    for rows in written:
        for audit in rows.rejections:
            found = store.execute(
                "SELECT 1 FROM statekit_rejections WHERE instance_id = ? AND event_id = ? "
                "AND recorded_at = ?",
                (audit.instance_id, audit.event_id, audit.recorded_at),
            ).fetchone()
            return found is not None
    return None


def resolve_decided(runner: HealingRunner, interrupted: TransactionInterrupted, *_: Any,
                    **__: Any) -> Any:  # fmt: skip
    """`apply`, `apply_batch`, `apply_many`: the answer decided, when its commit landed."""
    answer = runner._answer
    if not isinstance(interrupted, CommitUnknown) or answer is None:
        return None
    return answer if committed(runner.store, interrupted.written) else None


class FiringRunner(HealingRunner, Protocol):
    """What resolving `fire_due` needs."""

    def fire_due(self, now_ms: int | None = None, limit: int = 1000) -> list[Outcome]:
        """Deliver due timers."""
        ...


def resolve_firing(
    runner: FiringRunner,
    interrupted: TransactionInterrupted,
    now_ms: int | None = None,
    limit: int = 1000,
) -> list[Outcome] | None:
    """`fire_due`: the deliveries committed (the interrupted batch's when its commit
    landed), then those of what is still due (`_answer`: the outcomes so far and how
    many of them came before the interrupted batch)."""
    if runner._answer is None:
        return None  # interrupted before its first batch: just run again
    fired, before = cast("tuple[list[Outcome], int]", runner._answer)
    landed = isinstance(interrupted, CommitUnknown) and committed(runner.store, interrupted.written)
    done: list[Outcome] = list(fired if landed else fired[:before])
    return done + runner.fire_due(now_ms, limit - len(done))


class CreatingRunner(HealingRunner, Protocol):
    """What resolving `create` needs."""

    chart: Chart

    def load(self, instance_id: str) -> Instance:
        """The stored instance."""
        ...


def resolve_create(
    runner: CreatingRunner,
    interrupted: TransactionInterrupted,
    instance_id: str,
    context: Any = None,
    **_: Any,
) -> Instance | None:
    """`create`: the stored instance when the interrupted creation landed (an instance of
    this ID with its initial context and chart), else None (create again)."""
    if not isinstance(interrupted, CommitUnknown):
        return None
    row = runner.store.instance(instance_id)
    if row is None or row.initial_context != canonical_json(dict(context or {})):
        return None
    if row.chart_digest != runner.chart.digest:
        return None
    return runner.load(instance_id)

"""Delivering the outbox (`Dispatcher`) and taking each message once (`Inbox`).

    dispatcher = statekit.Dispatcher(store, {"PaymentSucceeded": notify})
    dispatcher.run_until_idle()           # or dispatch_once() from a loop

Delivery is at least once: a message is marked delivered only after its
handler returned, so a crash in between delivers it again. Per instance,
messages go out in the order they were emitted: a message is claimed only
when every earlier message of its instance is delivered or dead. A handler
that raises is retried with exponential backoff (`base_delay * 2 ** (n - 1)`,
at most `max_delay`); after `max_attempts` failures the message is dead
(listed by `statekit outbox`, no longer blocking its instance). Several
dispatchers may run at once: each claims messages for a lease (PostgreSQL:
`FOR UPDATE SKIP LOCKED`; SQLite: under its write lock), so in the normal
case none is delivered twice; a dispatcher that dies leaves its claims to
expire. Handlers run outside any database transaction.

The consumer's side: `Inbox(store, consumer).process(message, write)` records
(consumer, instance, message ID) and runs `write(connection)` in one
transaction, so a redelivered message takes effect exactly once.

A lost connection (a server restarted, fast or immediate) loses nothing. The
store makes a new connection on its next use (`store.connection_policy`); the
dispatcher remembers that its claims are in doubt and, before it claims again,
releases every claim it holds (`Store.release_outbox_claims`), so the messages of
a batch cut short are claimed again at once rather than after their lease. Claim,
handler, settle: wherever the connection went, a message is delivered again unless
its settle committed, and the inbox makes the redelivery take no effect; per
instance, the next message is not claimable until the one before it is settled, so
the order holds. A handler that fails because this store lost its connection (an
`Inbox.process` on it) has not failed: no attempt is counted. `Inbox.process` retries
its transaction when the connection was lost before or during its COMMIT (a COMMIT
that did land is found by the inbox row), within the store's `retry_for`. `serve`
keeps a dispatcher running across restarts and a server that stays down, until
stopped; `run_until_idle` goes on across restarts and raises `StoreUnavailableError`
once the server stayed away for `retry_for`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.runner.errors import StoreUnavailableError
from statekit.runner.identifier_bounds import too_long
from statekit.runner.json_text import parse_json
from statekit.runner.store.base import Store
from statekit.runner.store.connection_policy import TransactionInterrupted, failure_kind
from statekit.runner.store.rows import OutboxRow


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """A message as a handler receives it; `attempt` counts from 1."""

    instance_id: str
    message_id: str
    sequence: int
    type: str
    payload: Mapping[str, Any]
    attempt: int


Handler = Callable[[OutboxMessage], object]


@dataclass(frozen=True, slots=True)
class DispatchReport:
    """What one `dispatch_once` did."""

    delivered: int = 0
    failed: int = 0
    dead: int = 0

    @property
    def claimed(self) -> int:
        """Messages handled in this round."""
        return self.delivered + self.failed + self.dead

    def __add__(self, other: DispatchReport) -> DispatchReport:
        return DispatchReport(
            delivered=self.delivered + other.delivered,
            failed=self.failed + other.failed,
            dead=self.dead + other.dead,
        )


class Dispatcher:
    """Delivers undelivered outbox messages to `handlers` (by message type).

    `default` handles every type `handlers` does not name (a relay to a broker takes
    them all); a type without a handler fails like a raising handler (and ends dead).
    `on_claimed(messages)`, when given, sees each round's claimed messages (one per
    instance at most) before the first is handed to its handler, so that they can be
    started together (a relay publishes them all, then each handler waits for its
    acknowledgement); it must not raise, and a message's outcome is still its
    handler's.
    `clock` returns epoch seconds (injectable for tests).
    """

    def __init__(
        self,
        store: Store,
        handlers: Mapping[str, Handler],
        *,
        default: Handler | None = None,
        on_claimed: Callable[[list[OutboxMessage]], object] | None = None,
        max_attempts: int = 8,
        base_delay: float = 0.5,
        max_delay: float = 300.0,
        lease: float = 60.0,
        batch: int = 32,
        name: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.store = store
        self.handlers = dict(handlers)
        self.default = default
        self.on_claimed = on_claimed
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.lease = lease
        self.batch = batch
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self.claims_in_doubt = False
        """A lost connection interrupted a round: the claims this dispatcher holds are
        released before it claims again."""

    def backoff(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th failure."""
        return float(min(self.max_delay, self.base_delay * 2 ** (attempts - 1)))

    def dispatch_once(self) -> DispatchReport:
        """Claim a batch of deliverable messages and deliver each; report what happened.
        A lost connection raises (a statekit error: `TransactionInterrupted`, or
        `StoreUnavailableError` once the server stayed away for the store's
        `retry_for`) and leaves this dispatcher's claims to be released by the next
        call (see the module docstring)."""
        try:
            return self._round()
        except Exception as exc:
            if lost_connection(exc):
                self.claims_in_doubt = True
            raise

    def _round(self) -> DispatchReport:
        if self.claims_in_doubt:
            with self.store.write():
                self.store.release_outbox_claims(self.name)
            self.claims_in_doubt = False
        now = self.clock()
        rows = self.store.claim_outbox(self.name, now, self.lease, self.batch)
        messages = [_message(row) for row in rows]
        if self.on_claimed is not None and rows:
            self.on_claimed([m for m in messages if isinstance(m, OutboxMessage)])
        delivered = failed = dead = 0
        for row, message in zip(rows, messages, strict=True):  # at most one per instance
            error = message if isinstance(message, str) else self._deliver(message)
            attempts = row.attempts + 1
            now = self.clock()
            if error is None:
                status, retry_at = "delivered", now
                delivered += 1
            elif attempts >= self.max_attempts:
                status, retry_at = "dead", now
                dead += 1
            else:
                status, retry_at = "pending", now + self.backoff(attempts)
                failed += 1
            with self.store.write():
                self.store.settle_outbox(
                    row.id,
                    status=status,
                    attempts=attempts,
                    next_attempt_at=retry_at,
                    error=error,
                    now=now,
                )
        return DispatchReport(delivered=delivered, failed=failed, dead=dead)

    def run_until_idle(self, *, max_rounds: int | None = None, wait: bool = True) -> DispatchReport:
        """Dispatch until nothing is deliverable; with `wait`, sleep through backoffs
        of messages still pending and through claims other dispatchers hold on them
        (until `Store.next_claimable`, at most a second at a time). Returns the totals.
        A lost connection is waited out (the store reconnects within its `retry_for`,
        else `StoreUnavailableError` is raised) and the round done again."""
        total = DispatchReport()
        rounds = 0
        while max_rounds is None or rounds < max_rounds:
            rounds += 1
            try:
                report = self.dispatch_once()
            except TransactionInterrupted:
                continue  # the store makes a new connection on its next use
            total = total + report
            if report.claimed:
                continue
            try:
                due = self.store.next_claimable()
            except TransactionInterrupted:
                continue
            if due is None or not wait:
                break
            # Nothing claimable now: sleep until a message's backoff or another
            # dispatcher's claim (a crashed one's included) ends, checking at least
            # once a second for messages settled or added meanwhile.
            time.sleep(min(1.0, max(0.001, due - self.clock())))
        return total

    def serve(self, stop: threading.Event, *, poll: float = 1.0) -> DispatchReport:
        """Dispatch until `stop` is set (a signal handler sets it): what a long-running
        dispatcher process calls. When nothing is claimable it sleeps until the next
        message can be (at most `poll` seconds, so that messages added meanwhile are
        seen); a lost connection or a server that stays down is waited out with the
        store's backoff, without end. Every sleep of its own ends when `stop` is set; a
        round under way is finished first, and a wait inside the store (reconnecting
        within its `retry_for`) is the store's: a store opened with `?retry_for=0`
        leaves every wait to `serve`. Returns the totals."""
        total = DispatchReport()
        failures = 0
        while not stop.is_set():
            try:
                report = self.dispatch_once()
                due = None if report.claimed else self.store.next_claimable()
            except (TransactionInterrupted, StoreUnavailableError):
                stop.wait(self.store.policy.backoff(failures))
                failures += 1
                continue
            failures = 0
            total = total + report
            if not report.claimed:
                stop.wait(poll if due is None else min(poll, max(0.001, due - self.clock())))
        return total

    def _deliver(self, message: OutboxMessage) -> str | None:
        handler = self.handlers.get(message.type, self.default)
        if handler is None:
            return f"no handler for message type {message.type!r}"
        try:
            handler(message)
        except Exception as exc:  # a handler's failure is data: retried, then dead
            if isinstance(exc, (TransactionInterrupted, StoreUnavailableError)):
                raise  # this store's connection (an `Inbox.process`), not the handler: no attempt

            return f"{type(exc).__name__}: {exc}"[:2000]
        return None


def _message(row: OutboxRow) -> OutboxMessage | str:
    """The message of a claimed row, or why its stored payload cannot be one (a damaged
    row: a failure of this message, not of all)."""
    try:
        payload = parse_json(row.payload)
    except ValueError as exc:
        return f"the stored payload is not valid JSON: {exc}"
    return OutboxMessage(
        instance_id=row.instance_id,
        message_id=row.message_id,
        sequence=row.sequence,
        type=row.type,
        payload=payload,
        attempt=row.attempts + 1,
    )


class Inbox:
    """Idempotent consumption: each (consumer, instance, message ID) takes effect once."""

    def __init__(self, store: Store, consumer: str) -> None:
        problem = too_long(consumer, "a consumer name")  # it is indexed with the message
        if problem is not None:
            raise ValueError(problem)
        self.store = store
        self.consumer = consumer

    def process(self, message: OutboxMessage, write: Callable[[Any], object]) -> bool:
        """Run `write(connection)` and record the message in one transaction; False
        (and nothing run) when this consumer already processed the message.

        When the connection is lost before or during the COMMIT, the transaction is
        done again once the store has reconnected (within its `retry_for`; then
        `StoreUnavailableError`): `write` may so be called more than once, each earlier
        call's work rolled back with its transaction, or committed, and then the
        message is found processed and False returned (the effect taken once)."""
        deadline = self.store.policy.deadline()
        while True:
            try:
                with self.store.write():
                    first = self.store.inbox_claim(
                        self.consumer, message.instance_id, message.message_id, time.time()
                    )
                    if first:
                        write(self.store.connection)
                return first
            except Exception as exc:
                if not lost_connection(exc) or isinstance(exc, StoreUnavailableError):
                    raise
                if not deadline.wait():
                    raise StoreUnavailableError(
                        f"the inbox of {self.consumer!r} could not record message "
                        f"{message.message_id!r} of {message.instance_id!r}: the connection "
                        f"to the store stayed lost for its retry_for ({exc}); nothing of it "
                        "was committed unless the message is found processed when delivered "
                        "again"
                    ) from exc


def lost_connection(exc: BaseException) -> bool:
    """Whether `exc` says that the store's connection was lost or the server could not be
    reached (a statekit error, or the driver's own when raised from a consumer's
    statement on `store.connection`), rather than that something was wrong with what
    was done."""
    if isinstance(exc, (TransactionInterrupted, StoreUnavailableError)):
        return True
    return failure_kind(exc) is not None

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
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.runner.identifier_bounds import too_long
from statekit.runner.json_text import parse_json
from statekit.runner.store.base import Store
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


class Dispatcher:
    """Delivers undelivered outbox messages to `handlers` (by message type).

    A type without a handler fails like a raising handler (and ends dead).
    `clock` returns epoch seconds (injectable for tests).
    """

    def __init__(
        self,
        store: Store,
        handlers: Mapping[str, Handler],
        *,
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
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.lease = lease
        self.batch = batch
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.clock = clock

    def backoff(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th failure."""
        return float(min(self.max_delay, self.base_delay * 2 ** (attempts - 1)))

    def dispatch_once(self) -> DispatchReport:
        """Claim a batch of deliverable messages and deliver each; report what happened."""
        now = self.clock()
        rows = self.store.claim_outbox(self.name, now, self.lease, self.batch)
        delivered = failed = dead = 0
        for row in rows:  # at most one per instance: the claim takes heads only
            error = self._deliver(row)
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
        (until `Store.next_claimable`, at most a second at a time). Returns the totals."""
        total = DispatchReport()
        rounds = 0
        while max_rounds is None or rounds < max_rounds:
            rounds += 1
            report = self.dispatch_once()
            total = DispatchReport(
                delivered=total.delivered + report.delivered,
                failed=total.failed + report.failed,
                dead=total.dead + report.dead,
            )
            if report.claimed:
                continue
            due = self.store.next_claimable()
            if due is None or not wait:
                break
            # Nothing claimable now: sleep until a message's backoff or another
            # dispatcher's claim (a crashed one's included) ends, checking at least
            # once a second for messages settled or added meanwhile.
            time.sleep(min(1.0, max(0.001, due - self.clock())))
        return total

    def _deliver(self, row: OutboxRow) -> str | None:
        handler = self.handlers.get(row.type)
        if handler is None:
            return f"no handler for message type {row.type!r}"
        try:
            payload = parse_json(row.payload)
        except ValueError as exc:  # a damaged row: a failure of this message, not of all
            return f"the stored payload is not valid JSON: {exc}"
        message = OutboxMessage(
            instance_id=row.instance_id,
            message_id=row.message_id,
            sequence=row.sequence,
            type=row.type,
            payload=payload,
            attempt=row.attempts + 1,
        )
        try:
            handler(message)
        except Exception as exc:  # a handler's failure is data: retried, then dead
            return f"{type(exc).__name__}: {exc}"[:2000]
        return None


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
        (and nothing run) when this consumer already processed the message."""
        with self.store.write():
            first = self.store.inbox_claim(
                self.consumer, message.instance_id, message.message_id, time.time()
            )
            if first:
                write(self.store.connection)
        return first

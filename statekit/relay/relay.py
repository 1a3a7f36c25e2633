"""`Relay`: the outbox published to NATS JetStream, the transactional outbox's second half.

    with Relay(store, "nats://127.0.0.1:4222/orders") as relay:
        relay.run_until_idle()              # or relay.serve(stop) in a daemon

The relay is a `statekit.Dispatcher` whose one handler publishes: it claims as the
dispatcher claims (leases, several relays at once, a lost database connection
waited out), and settles a message as delivered only once JetStream acknowledged it
(the stream stored it: a publisher confirm). So delivery is at least once, and in
order per instance, since the dispatcher claims an instance's next message only after
the one before it is settled. A publish that fails (the broker down or restarting,
no acknowledgement within `ack_timeout`) is a failed attempt: retried after the
dispatcher's backoff (`base_delay` doubling to `max_delay`), dead after
`max_attempts` (by default about 50 minutes of failures: a broker outage, not a bad
message, is what a relay usually meets).

A round's messages (one per instance at most: the claim takes each instance's next
one) are sent together and their acknowledgements awaited in turn, so the round
trips overlap (bench/relay_throughput.py); a message that fails is settled as failed
on its own.

Each message goes to the subject `PREFIX.CHART.TYPE` (`statekit.relay.target`) with
the envelope and `Nats-Msg-Id` of `statekit.relay.envelope`: a message published
twice (the relay stopped between the acknowledgement and its settle) is dropped by
JetStream within the stream's duplicate window, and a consumer applying it through
`statekit.relay.consumer` finds it already applied outside it. The stream taking
`PREFIX.>` is used when the server has one, else made (`stream`, file storage).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from statekit.relay.envelope import encode_message
from statekit.relay.nats_link import NatsLink, PendingPublish
from statekit.relay.target import BrokerTarget, parse_target
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.outbox import Dispatcher, DispatchReport, OutboxMessage
from statekit.runner.store.base import Store

CHART_CACHE_SIZE = 10_000
"""Instances whose chart name the relay remembers (it is read once per instance, not once
per message); the memory is emptied when full."""


@dataclass(frozen=True, slots=True)
class Publication:
    """One message JetStream acknowledged: where it went and whether it was a duplicate
    (a second publish of a message the stream holds, which it dropped)."""

    message: OutboxMessage
    subject: str
    stream: str
    stream_sequence: int
    duplicate: bool


class Relay:
    """Publishes a store's outbox to a NATS JetStream server (module docstring).

    `url`: `nats://HOST[:PORT][/subject-prefix]` (`RelayURLError` when it is not one).
    `on_published(publication)` is called after each acknowledgement, before the
    message is settled; `on_failed(message, error)` after each failed publish. A hook
    that raises makes that attempt a failure.
    """

    def __init__(
        self,
        store: Store,
        url: str,
        *,
        stream: str = "STATEKIT",
        ack_timeout: float = 5.0,
        reconnect_wait: float = 1.0,
        max_attempts: int = 100,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        lease: float = 60.0,
        batch: int = 32,
        name: str | None = None,
        clock: Callable[[], float] = time.time,
        on_published: Callable[[Publication], object] | None = None,
        on_failed: Callable[[OutboxMessage, Exception], object] | None = None,
    ) -> None:
        self.target: BrokerTarget = parse_target(url)
        self.store = store
        self.stream_name = stream
        self.ack_timeout = ack_timeout
        self.on_published = on_published
        self.on_failed = on_failed
        self.link = NatsLink(self.target.server, reconnect_wait=reconnect_wait)
        self.dispatcher = Dispatcher(
            store,
            {},
            default=self._publish,
            on_claimed=self._publish_ahead,
            max_attempts=max_attempts,
            base_delay=base_delay,
            max_delay=max_delay,
            lease=lease,
            batch=batch,
            name=name,
            clock=clock,
        )
        self._charts: dict[str, str] = {}
        self._ahead: dict[tuple[str, str], PendingPublish] = {}

    def open(self) -> Relay:
        """Connect to the server and find or make the stream (`RelayError` saying why when
        either cannot be done)."""
        self.link.open()
        try:
            self.stream_name = self.link.ensure_stream(self.stream_name, self.target.subjects)
        except BaseException:
            self.link.close()
            raise
        return self

    def close(self) -> None:
        """Disconnect (the store stays open: it is the caller's)."""
        self.link.close()

    def __enter__(self) -> Relay:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def dispatch_once(self) -> DispatchReport:
        """One round: claim a batch and publish each message (`Dispatcher.dispatch_once`)."""
        return self.dispatcher.dispatch_once()

    def run_until_idle(self, *, max_rounds: int | None = None, wait: bool = True) -> DispatchReport:
        """Publish until nothing is publishable (`Dispatcher.run_until_idle`: with `wait`,
        through the backoffs of messages that failed, so until each is published or
        dead)."""
        return self.dispatcher.run_until_idle(max_rounds=max_rounds, wait=wait)

    def serve(self, stop: threading.Event, *, poll: float = 1.0) -> DispatchReport:
        """Publish until `stop` is set (`Dispatcher.serve`): a long-running relay."""
        return self.dispatcher.serve(stop, poll=poll)

    def _publish_ahead(self, messages: list[OutboxMessage]) -> None:
        """Send a round's messages together (one per instance: their order is not each
        other's), so that their acknowledgements are awaited together; a message that
        cannot be sent now is published, and fails, in its turn (`_publish`)."""
        self._ahead = {}
        for message in messages:
            try:
                subject, body, headers = self._wire(message)
                pending = self.link.start_publish(subject, body, headers, self.ack_timeout)
            except Exception:  # said by `_publish` when the message's turn comes
                continue
            self._ahead[message.instance_id, message.message_id] = pending

    def _publish(self, message: OutboxMessage) -> None:
        try:
            pending = self._ahead.pop((message.instance_id, message.message_id), None)
            if pending is None:
                subject, body, headers = self._wire(message)
                pending = self.link.start_publish(subject, body, headers, self.ack_timeout)
            stream, sequence, duplicate = self.link.acknowledgement(pending)
            if self.on_published is not None:
                publication = Publication(message, pending.subject, stream, sequence, duplicate)
                self.on_published(publication)
        except Exception as exc:
            if self.on_failed is not None:
                self.on_failed(message, exc)
            raise

    def _wire(self, message: OutboxMessage) -> tuple[str, bytes, dict[str, str]]:
        """The subject, body and headers of `message`."""
        chart = self._chart_of(message.instance_id)
        body, headers = encode_message(chart, message)
        return self.target.subject(chart, message.type), body, headers

    def _chart_of(self, instance_id: str) -> str:
        chart = self._charts.get(instance_id)
        if chart is None:
            row = self.store.instance(instance_id)
            if row is None:  # its outbox rows outlived it (a store edited by hand)
                raise UnknownInstanceError(f"the store has no instance {instance_id!r}")
            if len(self._charts) >= CHART_CACHE_SIZE:
                self._charts.clear()
            chart = self._charts[instance_id] = row.chart_name
        return chart

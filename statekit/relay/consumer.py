"""The consumer's side of the relay: a received message applied to another chart's instance.

    applier = EventApplier(runner, route)
    await jetstream.subscribe("statekit.payment.>", durable="shipping", cb=applier,
                              manual_ack=True)

`route(message)` says which instance of the runner's chart the relayed message
(`statekit.relay.envelope.RelayedMessage`) is for, as which event and payload
(an `AppliedEvent`), or None to drop it. The event is applied with
`Runner.apply`, its event ID being the message's store-wide key, and the NATS
message is acknowledged only after that transaction committed: a crash in between
makes JetStream deliver it again, and the runner answers the redelivery
ALREADY_APPLIED with the first outcome, changing nothing. Every classified outcome
(APPLIED, ALREADY_APPLIED, REJECTED) is final and acknowledged; a body that is not a
relayed message is terminated (`term`: never delivered again) and its error raised;
any other error (the store unreachable) leaves the message unacknowledged, so
JetStream delivers it again after the consumer's ack wait.

Order: the relay publishes an instance's messages in order, but JetStream delivers a
message again (unacknowledged past the ack wait, or refused with `nak`) after the
messages that followed it unless the consumer has one message in flight: give it
`ConsumerConfig(max_ack_pending=1)` (tests/relay/test_consumer.py) when the route's
chart depends on the order, as a guard comparing a running total does.

Calls into the runner run in one thread of the applier's own, one at a time, so that
the event loop never blocks on the database and a runner (one connection) is only
ever used from that thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from nats.aio.msg import Msg

from statekit.relay.envelope import RelayedMessage, RelayedMessageError, decode_message
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner


@dataclass(frozen=True, slots=True)
class AppliedEvent:
    """The event a relayed message becomes: for `instance_id`, of `type`, with `payload`."""

    instance_id: str
    type: str
    payload: Mapping[str, Any] = field(default_factory=dict)


Route = Callable[[RelayedMessage], AppliedEvent | None]
"""Which event (for which instance) a relayed message becomes; None to drop it."""


class EventApplier:
    """Applies relayed messages to instances of `runner`'s chart (module docstring).

    `create`: an instance the route names that does not exist yet is created first (in
    the chart's initial state, declared defaults); otherwise that is an
    `UnknownInstanceError` and the message stays unacknowledged.
    """

    def __init__(self, runner: Runner, route: Route, *, create: bool = False) -> None:
        self.runner = runner
        self.route = route
        self.create = create
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statekit-applier")

    def apply(self, message: RelayedMessage) -> Outcome | None:
        """Apply `message` as its route says, in the calling thread: the outcome, or None
        when the route dropped it."""
        event = self.route(message)
        if event is None:
            return None
        if self.create:
            self.runner.create(event.instance_id, exist_ok=True)
        return self.runner.apply(event.instance_id, message.key, event.type, event.payload)

    async def __call__(self, msg: Msg) -> Outcome | None:
        """Decode, apply (in the applier's thread) and acknowledge one NATS message."""
        try:
            message = decode_message(msg.data)
        except RelayedMessageError:
            await msg.term()
            raise
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self._executor, self.apply, message)
        await msg.ack_sync()
        return outcome

    def close(self) -> None:
        """Stop the applier's thread (after the call under way)."""
        self._executor.shutdown(wait=True)

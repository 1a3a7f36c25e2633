"""The consumer's side, on SQLite and on PostgreSQL: relayed messages, received from a real
JetStream consumer, applied to another chart's instances by `EventApplier`, each once
however often it is delivered, in order per instance, and acknowledged only after the
store committed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import nats
import pytest
from nats.js.api import ConsumerConfig
from nats.js.client import JetStreamContext
from relay_helpers import Lane, counter_with_messages, new_lane, running_broker
from runner_charts import chart_from

from statekit.relay import AppliedEvent, EventApplier, Relay, RelayedMessage, RelayedMessageError
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.testing.nats_server import ThrowawayNats

TALLY = """
statechart: tally
version: 1
description: Adds up one counter's Counted messages, refusing one that comes out of order.
context:
  sum: {type: integer, default: 0}
  seen: {type: integer, default: 0}
events:
  Counted: {total: integer, by: integer}
guards:
  in_order:
    if: event.total == ctx.sum + event.by
    else: OUT_OF_ORDER
initial: counting
states:
  counting:
    on:
      Counted:
        guard: in_order
        do:
          - assign: {sum: event.total, seen: ctx.seen + 1}
"""


@pytest.fixture(scope="module")
def broker() -> Iterator[ThrowawayNats]:
    yield from running_broker()


def to_tally(message: RelayedMessage) -> AppliedEvent:
    payload = message.payload
    return AppliedEvent(f"tally-{message.instance_id}", "Counted", dict(payload))


async def consume(
    broker: ThrowawayNats, lane: Lane, durable: str, applier: EventApplier, count: int
) -> list[Outcome | None]:
    """Fetch `count` messages for a new durable consumer and hand each to `applier`."""
    client = await nats.connect(broker.url)
    try:
        jetstream = client.jetstream()
        subscription = await in_order(jetstream, lane, durable)
        outcomes: list[Outcome | None] = []
        while len(outcomes) < count:
            for msg in await subscription.fetch(1, timeout=5):
                outcomes.append(await applier(msg))
        return outcomes
    finally:
        await client.close()


async def in_order(
    jetstream: JetStreamContext, lane: Lane, durable: str
) -> JetStreamContext.PullSubscription:
    """A pull consumer with one message in flight: a message delivered again (not yet
    acknowledged, or refused with `nak`) comes before the next one."""
    return await jetstream.pull_subscribe(
        f"{lane.prefix}.counter.>",
        durable=durable,
        stream=lane.stream,
        config=ConsumerConfig(max_ack_pending=1),
    )


async def pending_acks(jetstream: JetStreamContext, lane: Lane, durable: str) -> int:
    info = await jetstream.consumer_info(lane.stream, durable)
    return int(info.num_ack_pending or 0)


def relayed(
    broker: ThrowawayNats, store_url: str, instances: int, events: int
) -> tuple[Runner, Lane]:
    """Messages of `instances` counters, relayed to a lane of their own."""
    source = counter_with_messages(store_url, instances, events)
    lane = new_lane(broker)
    with Relay(source.store, lane.url, stream=lane.stream) as relay:
        relay.run_until_idle()
    return source, lane


def test_each_message_is_applied_once_however_often_it_is_delivered(
    broker: ThrowawayNats, store_url: str
) -> None:
    source, lane = relayed(broker, store_url, 3, 4)
    tally = Runner(chart_from(TALLY), source.store)
    applier = EventApplier(tally, to_tally, create=True)
    try:
        first = asyncio.run(consume(broker, lane, "tally", applier, 12))
        # a second consumer of the same stream: every message delivered again
        again = asyncio.run(consume(broker, lane, "tally-again", applier, 12))
    finally:
        applier.close()
    assert [o.status.value if o else None for o in first] == ["APPLIED"] * 12
    assert [o.status.value if o else None for o in again] == ["ALREADY_APPLIED"] * 12
    for i in range(3):
        instance = tally.load(f"tally-i{i}")
        assert (instance.state.context["sum"], instance.state.context["seen"]) == (10, 4)
        events = tally.history(f"tally-i{i}")
        assert [e.event_id for e in events] == [f"i{i}/e{n}/0" for n in range(4)]


def test_a_message_is_acknowledged_only_after_the_commit(
    broker: ThrowawayNats, store_url: str
) -> None:
    source, lane = relayed(broker, store_url, 1, 2)
    tally = Runner(chart_from(TALLY), source.store)

    def store_down(message: RelayedMessage) -> AppliedEvent:
        raise ConnectionError("the consumer's store is down")

    async def fail_then_recover() -> tuple[int, int, list[Outcome | None]]:
        client = await nats.connect(broker.url)
        jetstream = client.jetstream()
        subscription = await in_order(jetstream, lane, "tally")
        failing = EventApplier(tally, store_down, create=True)
        [msg] = await subscription.fetch(1, timeout=5)
        with pytest.raises(ConnectionError):
            await failing(msg)
        failing.close()
        unacknowledged = await pending_acks(jetstream, lane, "tally")
        await msg.nak()  # delivered again at once, rather than after the ack wait
        working = EventApplier(tally, to_tally, create=True)
        outcomes: list[Outcome | None] = []
        while len(outcomes) < 2:
            for again in await subscription.fetch(1, timeout=5):
                outcomes.append(await working(again))
        working.close()
        acknowledged = await pending_acks(jetstream, lane, "tally")
        await client.close()
        return unacknowledged, acknowledged, outcomes

    unacknowledged, acknowledged, outcomes = asyncio.run(fail_then_recover())
    assert unacknowledged == 1 and acknowledged == 0
    assert [o.status.value if o else None for o in outcomes] == ["APPLIED", "APPLIED"]
    assert tally.load("tally-i0").state.context["sum"] == 3


def test_a_body_that_is_not_a_relayed_message_is_terminated(
    broker: ThrowawayNats, store_url: str
) -> None:
    """Terminated, not left unacknowledged: with one message in flight, the message after it
    is delivered at once (an unacknowledged one would hold it back for the ack wait)."""
    source = counter_with_messages(store_url, 1, 1)
    lane = new_lane(broker)
    tally = Runner(chart_from(TALLY), source.store)
    applier = EventApplier(tally, to_tally, create=True)

    async def junk_then_a_message() -> Outcome | None:
        client = await nats.connect(broker.url)
        jetstream = client.jetstream()
        await jetstream.add_stream(name=lane.stream, subjects=[f"{lane.prefix}.>"])
        await jetstream.publish(f"{lane.prefix}.counter.Counted", b'{"chart": 1}')
        with Relay(source.store, lane.url, stream=lane.stream) as relay:
            await asyncio.to_thread(relay.run_until_idle)
        subscription = await in_order(jetstream, lane, "tally")
        [junk] = await subscription.fetch(1, timeout=5)
        with pytest.raises(RelayedMessageError, match="'chart' is missing or not a str"):
            await applier(junk)
        [message] = await subscription.fetch(1, timeout=5)
        outcome = await applier(message)
        await client.close()
        return outcome

    try:
        outcome = asyncio.run(junk_then_a_message())
    finally:
        applier.close()
    assert outcome is not None and outcome.status.value == "APPLIED"

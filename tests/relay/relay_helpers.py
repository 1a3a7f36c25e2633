"""What the relay's tests share: a real nats-server per module, a store with messages, and
the stream read back as a consumer reads it.

Each test module starts one `ThrowawayNats` (JetStream on a file store in a temporary
directory, loopback, killed at teardown); each test relays under a subject prefix and a
stream of its own (`Lane`), so that tests sharing the server never see each other's
messages. When nats-server is not installed the tests FAIL, never skip.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import nats
import pytest
from runner_charts import COUNTER, chart_from

from statekit.relay import RelayedMessage
from statekit.relay.envelope import MESSAGE_ID_HEADER, decode_message
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.nats_server import NatsUnavailable, ThrowawayNats

_lanes = itertools.count(1)


def running_broker() -> Iterator[ThrowawayNats]:
    """A started server for as long as the fixture lasts (never a skip)."""
    try:
        broker = ThrowawayNats().start()
    except NatsUnavailable as exc:
        pytest.fail(f"nats-server is required by the relay tests and could not start: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


@dataclass(frozen=True)
class Lane:
    """A subject prefix and a stream of one test's own on the module's server."""

    prefix: str
    stream: str
    url: str


def new_lane(broker: ThrowawayNats) -> Lane:
    n = next(_lanes)
    return Lane(prefix=f"t{n}", stream=f"T{n}", url=f"{broker.url}/t{n}")


def counter_with_messages(url: str, instances: int, events: int, *, first: int = 0) -> Runner:
    """A runner of the counter chart whose instances i0.. each emitted `events` messages
    (`Counted` with the running total), events numbered from `first`."""
    runner = Runner(chart_from(COUNTER), open_store(url))
    for i in range(instances):
        runner.create(f"i{i}", exist_ok=True)
        for n in range(first, first + events):
            runner.apply(f"i{i}", f"e{n}", "Incr", {"by": n + 1})
    return runner


@dataclass(frozen=True)
class Stored:
    """A message as the stream holds it."""

    subject: str
    msg_id: str
    message: RelayedMessage


def stream_contents(server_url: str, stream: str) -> list[Stored]:
    """Every message of `stream`, in the stream's order (read by sequence number)."""

    async def read() -> list[Stored]:
        client = await nats.connect(server_url)
        try:
            jetstream = client.jetstream()
            info = await jetstream.stream_info(stream)
            found = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                raw = await jetstream.get_msg(stream, seq)
                assert raw.data is not None and raw.headers is not None
                found.append(
                    Stored(
                        raw.subject or "", raw.headers[MESSAGE_ID_HEADER], decode_message(raw.data)
                    )
                )
            return found
        finally:
            await client.close()

    return asyncio.run(read())


def per_instance(stored: list[Stored]) -> dict[str, list[str]]:
    """Message IDs per instance, in the stream's order."""
    seen: dict[str, list[str]] = defaultdict(list)
    for s in stored:
        seen[s.message.instance_id].append(s.message.message_id)
    return dict(seen)


def expected_ids(instances: int, events: range) -> dict[str, list[str]]:
    """What `per_instance` holds when every message of `counter_with_messages` went out
    once, in order."""
    return {f"i{i}": [f"e{n}/0" for n in events] for i in range(instances)}

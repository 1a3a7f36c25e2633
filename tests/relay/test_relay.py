"""The relay against a real nats-server with JetStream, on SQLite and on PostgreSQL:
every message published once, in order per instance, under its subject and
`Nats-Msg-Id`; a second publish of a message (the relay stopped between the
acknowledgement and its settle) dropped by the stream; a publish that fails retried
with the dispatcher's backoff."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from relay_helpers import (
    counter_with_messages,
    expected_ids,
    new_lane,
    per_instance,
    running_broker,
    stream_contents,
)

from statekit.relay import Publication, Relay, RelayError, message_key
from statekit.runner.outbox import DispatchReport, OutboxMessage
from statekit.runner.store import open_store
from statekit.testing.nats_server import ThrowawayNats


@pytest.fixture(scope="module")
def broker() -> Iterator[ThrowawayNats]:
    yield from running_broker()


def test_publishes_every_message_once_in_order_per_instance(
    broker: ThrowawayNats, store_url: str
) -> None:
    runner = counter_with_messages(store_url, 3, 5)
    lane = new_lane(broker)
    published: list[Publication] = []
    with Relay(runner.store, lane.url, stream=lane.stream, on_published=published.append) as relay:
        report = relay.run_until_idle()
    assert report.delivered == 15 and report.failed == report.dead == 0
    stored = stream_contents(broker.url, lane.stream)
    assert per_instance(stored) == expected_ids(3, range(5))
    assert {s.subject for s in stored} == {f"{lane.prefix}.counter.Counted"}
    for s in stored:
        assert s.msg_id == s.message.key == message_key(s.message.instance_id, s.message.message_id)
        assert s.message.chart == "counter" and s.message.type == "Counted"
    totals = [s.message.payload["total"] for s in stored if s.message.instance_id == "i1"]
    assert totals == [1, 3, 6, 10, 15]
    assert [p.stream_sequence for p in published] == list(range(1, 16))
    assert not any(p.duplicate for p in published)
    assert runner.store.outbox(["pending", "dead"]) == []


def test_a_second_publish_of_a_message_is_dropped_by_the_stream(
    broker: ThrowawayNats, store_url: str
) -> None:
    """The relay dies between JetStream's acknowledgement and the settle (the hook raises
    there, once per message): the message is published again, and the stream keeps one."""
    runner = counter_with_messages(store_url, 2, 3)
    lane = new_lane(broker)
    published: list[Publication] = []

    def stop_before_settling(publication: Publication) -> None:
        published.append(publication)
        if publication.message.attempt == 1:
            raise RuntimeError("the relay stopped before it settled the message")

    with Relay(
        runner.store,
        lane.url,
        stream=lane.stream,
        base_delay=0.001,
        on_published=stop_before_settling,
    ) as relay:
        report = relay.run_until_idle()
    assert report.delivered == 6 and report.failed == 6
    firsts = [p for p in published if p.message.attempt == 1]
    seconds = [p for p in published if p.message.attempt == 2]
    assert not any(p.duplicate for p in firsts) and all(p.duplicate for p in seconds)
    assert sorted(p.stream_sequence for p in seconds) == sorted(p.stream_sequence for p in firsts)
    stored = stream_contents(broker.url, lane.stream)
    assert per_instance(stored) == expected_ids(2, range(3))
    assert runner.store.outbox(["pending", "dead"]) == []


def test_messages_of_instances_with_the_same_event_ids_are_not_taken_for_duplicates(
    broker: ThrowawayNats, store_url: str
) -> None:
    """Outbox message IDs are unique per instance only: the key adds the instance."""
    runner = counter_with_messages(store_url, 4, 1)
    lane = new_lane(broker)
    with Relay(runner.store, lane.url, stream=lane.stream) as relay:
        relay.run_until_idle()
    stored = stream_contents(broker.url, lane.stream)
    assert sorted(s.msg_id for s in stored) == [f"i{i}/e0/0" for i in range(4)]


def test_a_failed_publish_is_retried_with_the_dispatchers_backoff(
    broker: ThrowawayNats, tmp_path: Path
) -> None:
    """No stream takes the subject (the stream was deleted under the relay): each publish
    fails, is retried after the backoff, and the message ends dead after max_attempts,
    blocking its instance's next message meanwhile."""
    runner = counter_with_messages(f"sqlite:///{tmp_path}/s.db", 1, 2)
    lane = new_lane(broker)
    failures: list[tuple[OutboxMessage, Exception]] = []
    with Relay(
        runner.store,
        lane.url,
        stream=lane.stream,
        base_delay=0.001,
        max_attempts=3,
        on_failed=lambda m, e: failures.append((m, e)),
    ) as relay:

        async def delete_stream() -> None:
            client = await nats.connect(broker.url)
            await client.jetstream().delete_stream(lane.stream)
            await client.close()

        asyncio.run(delete_stream())
        report = relay.run_until_idle()
    assert report.dead == 2 and report.failed == 4 and report.delivered == 0
    assert [(m.message_id, m.attempt) for m, _ in failures] == [
        ("e0/0", 1), ("e0/0", 2), ("e0/0", 3), ("e1/0", 1), ("e1/0", 2), ("e1/0", 3),
    ]  # fmt: skip
    assert all(
        f"no JetStream stream takes the subject {lane.prefix}." in str(e) for _, e in failures
    )
    dead = runner.store.outbox(["dead"])
    assert [r.message_id for r in dead] == ["e0/0", "e1/0"]
    assert all("no JetStream stream" in (r.last_error or "") for r in dead)


def test_a_server_that_does_not_listen_is_said_at_once(tmp_path: Path) -> None:
    runner = counter_with_messages(f"sqlite:///{tmp_path}/s.db", 1, 1)
    relay = Relay(runner.store, "nats://127.0.0.1:1", reconnect_wait=0.01)
    with pytest.raises(RelayError, match=r"cannot reach the NATS server at nats://127\.0\.0\.1:1"):
        relay.open()
    assert [r.status for r in runner.store.outbox(["pending"])] == ["pending"]


def test_two_relays_at_once_publish_each_message_once_in_order(
    broker: ThrowawayNats, store_url: str
) -> None:
    """Two relays on one store, each with its own connection, claiming small batches at
    the same time: the claims keep them apart and the order per instance holds."""
    counter_with_messages(store_url, 6, 5).store.close()
    lane = new_lane(broker)
    reports: list[DispatchReport] = []
    ready = threading.Barrier(2)

    def relay_all() -> None:
        store = open_store(store_url)
        with Relay(store, lane.url, stream=lane.stream, batch=2) as relay:
            ready.wait(timeout=30)
            reports.append(relay.run_until_idle())
        store.close()

    threads = [threading.Thread(target=relay_all) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sum(r.delivered for r in reports) == 30 and len(reports) == 2
    assert all(r.failed == r.dead == 0 for r in reports)
    stored = stream_contents(broker.url, lane.stream)
    assert per_instance(stored) == expected_ids(6, range(5))
    assert len(stored) == 30

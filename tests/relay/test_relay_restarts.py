"""The broker restarted in the middle of a relay's run, on SQLite and on PostgreSQL:
nothing lost, each message in the stream once, in order per instance; the messages
that met the broker down (and those emitted while it was) are retried with the
dispatcher's backoff and go out once it is back.

The points are forced by the relay's hooks, never by a sleep: the server is killed
(SIGKILL) right after the relay's Nth acknowledgement, new messages are written while
it is down at the first failed publish, and it is started again on the same port and
JetStream store at the third.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from relay_helpers import (
    counter_with_messages,
    expected_ids,
    new_lane,
    per_instance,
    running_broker,
    stream_contents,
)

from statekit.relay import Publication, Relay
from statekit.runner.outbox import OutboxMessage
from statekit.testing.nats_server import ThrowawayNats


@pytest.fixture(scope="module")
def broker() -> Iterator[ThrowawayNats]:
    """A server of this module's own: its tests stop and start it."""
    yield from running_broker()


@pytest.mark.parametrize("halt_after", [1, 7])
def test_nothing_is_lost_across_a_broker_restart(
    broker: ThrowawayNats, store_url: str, halt_after: int
) -> None:
    runner = counter_with_messages(store_url, 3, 4)
    lane = new_lane(broker)
    published: list[Publication] = []
    failures: list[tuple[OutboxMessage, Exception]] = []

    def halt_at_the_nth(publication: Publication) -> None:
        published.append(publication)
        if len(published) == halt_after:
            broker.halt()

    def write_while_down_then_resume(message: OutboxMessage, error: Exception) -> None:
        failures.append((message, error))
        if len(failures) == 1:  # messages emitted while the broker is down
            counter_with_messages(store_url, 4, 2, first=4).store.close()
        if len(failures) == 3:
            broker.resume()

    with Relay(
        runner.store,
        lane.url,
        stream=lane.stream,
        ack_timeout=1.0,
        reconnect_wait=0.05,
        base_delay=0.02,
        max_delay=0.2,
        on_published=halt_at_the_nth,
        on_failed=write_while_down_then_resume,
    ) as relay:
        report = relay.run_until_idle()
    total = 3 * 4 + 4 * 2
    assert len(failures) >= 3 and report.dead == 0
    assert report.delivered == total and report.failed == len(failures)
    stored = stream_contents(broker.url, lane.stream)
    expected = expected_ids(4, range(6))
    expected["i3"] = [f"e{n}/0" for n in range(4, 6)]
    assert per_instance(stored) == expected  # each once, in order per instance
    assert len({s.msg_id for s in stored}) == len(stored) == total
    assert runner.store.outbox(["pending", "dead"]) == []
    for failed, _ in failures:  # each failed publish went out later, at a later attempt
        assert any(
            (p.message.instance_id, p.message.message_id) == (failed.instance_id, failed.message_id)
            and p.message.attempt > failed.attempt
            for p in published
        )
    delivered = runner.store.outbox(["delivered"])
    assert sum(r.attempts > 1 for r in delivered) == len(
        {m.message_id + m.instance_id for m, _ in failures}
    )

"""Messages between instances (schema 11): written pending in the sender's transaction,
delivered by `Runner.deliver_messages` each in a transaction of its own on the receiver,
exactly once, in order per sender, with the receiving step's classification replied when
asked; on both stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import COUNTER, chart_from, write_chart

from statekit.runner.message_delivery import message_event_id, new_message, reply_event_id
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import LATEST

ASKER = """
statechart: asker
version: 1
description: Sends increments to counters and records the answers it gets back.
context:
  answers: {type: integer, default: 0}
  last: {type: string, default: ""}
events:
  Answer: {status: string, reason: {type: string, nullable: true}}
initial: asking
states:
  asking:
    on:
      Answer:
        do:
          - assign: {answers: ctx.answers + 1, last: event.status}
"""


def _send(
    store: Store, *messages: tuple[str, str, int, int, str, dict[str, int], str | None]
) -> None:
    """Write messages as a sender's transaction does (target, sender, version, index, event,
    payload, reply)."""
    with store.write():
        store.insert_instance_messages(
            [
                new_message("counter", target, sender, version, index, event, payload, reply, 0.0)
                for target, sender, version, index, event, payload, reply in messages
            ]
        )


def _runners(url: str) -> tuple[Runner, Runner]:
    counter, asker = chart_from(COUNTER), chart_from(ASKER)
    store = open_store(url)
    return Runner(asker, store, charts=[counter]), Runner(counter, store)


def test_messages_are_delivered_once_in_order_per_sender(store_url: str) -> None:
    asker, counter = _runners(store_url)
    counter.create("c1")
    counter.create("c2")
    asker.create("a")
    asker.create("b")
    _send(
        asker.store,
        ("c1", "a", 1, 0, "Incr", {"by": 1}, None),
        ("c1", "b", 1, 0, "Incr", {"by": 10}, None),
        ("c1", "a", 1, 1, "Incr", {"by": 2}, None),
        ("c2", "a", 2, 0, "Incr", {"by": 3}, None),
    )
    first = asker.deliver_messages(limit=10)
    # one message per sender at a time: a's second waits for its first
    assert [(d.sender_instance_id, d.event_id, d.status) for d in first] == [
        ("a", message_event_id("a", 1, 0), "APPLIED"),
        ("b", message_event_id("b", 1, 0), "APPLIED"),
    ]
    rest = [d for _ in range(3) for d in asker.deliver_messages(limit=10)]
    assert [(d.target_instance_id, d.event_id) for d in rest] == [
        ("c1", message_event_id("a", 1, 1)),
        ("c2", message_event_id("a", 2, 0)),
    ]
    assert asker.deliver_messages() == []
    history = [e.event_id for e in counter.history("c1")]
    assert history == [message_event_id(*m) for m in (("a", 1, 0), ("b", 1, 0), ("a", 1, 1))]
    assert counter.load("c1").state.context["total"] == 13
    assert counter.load("c2").state.context["total"] == 3
    assert counter.verify("c1").ok and counter.verify("c2").ok


def test_a_message_written_twice_is_applied_once(store_url: str) -> None:
    asker, counter = _runners(store_url)
    counter.create("c1")
    asker.create("a")
    _send(asker.store, ("c1", "a", 1, 0, "Incr", {"by": 5}, None))
    [delivered] = asker.deliver_messages()
    # the same message again (a sender's transaction replayed under another row): the
    # receiver's history has its event ID, so it is ALREADY_APPLIED, nothing doubled
    with asker.store.write():
        asker.store.execute("UPDATE statekit_instance_inbox SET state = 'pending'")
    [again] = asker.deliver_messages()
    assert (delivered.status, again.status) == ("APPLIED", "ALREADY_APPLIED")
    assert counter.load("c1").state.context["total"] == 5
    assert [e.event_id for e in counter.history("c1")] == [message_event_id("a", 1, 0)]


@pytest.mark.parametrize(
    ("target", "event", "payload", "answer", "reason"),
    [
        ("c1", "Incr", {"by": 1}, "APPLIED", None),
        ("c1", "Incr", {"by": 0}, "REJECTED", "NOT_POSITIVE"),
        ("c1", "Ping", {}, "ALREADY_APPLIED", None),
        ("nobody", "Incr", {"by": 1}, "REJECTED", "UNKNOWN_INSTANCE"),
        ("a", "Incr", {"by": 1}, "REJECTED", "WRONG_CHART"),
    ],
)
def test_the_receiving_step_is_replied_to_the_sender(
    store_url: str,
    target: str,
    event: str,
    payload: dict[str, int],
    answer: str,
    reason: str | None,
) -> None:
    asker, counter = _runners(store_url)
    counter.create("c1")
    asker.create("a")
    _send(asker.store, (target, "a", 1, 0, event, payload, "Answer"))
    [delivered] = asker.deliver_messages()
    assert (delivered.status, delivered.reason) == (answer, reason)
    [replied] = asker.deliver_messages()
    assert (replied.target_instance_id, replied.event, replied.status) == ("a", "Answer", "APPLIED")
    assert replied.event_id == reply_event_id(message_event_id("a", 1, 0))
    [entry] = asker.history("a")
    assert entry.payload == {"status": answer, "reason": reason}
    assert asker.load("a").state.context["last"] == answer
    assert asker.deliver_messages() == []


def test_a_receiver_whose_chart_the_runner_lacks_stays_pending(store_url: str) -> None:
    asker, counter = _runners(store_url)
    counter.create("c1")
    asker.create("a")
    _send(
        asker.store,
        ("c1", "a", 1, 0, "Incr", {"by": 1}, None),
        ("c1", "a", 1, 1, "Incr", {"by": 2}, None),
    )
    alone = Runner(chart_from(ASKER), counter.store)  # given no counter chart
    assert alone.deliver_messages() == []
    [(_message, why)] = alone.message_problems.items()
    assert "was not given chart 'counter'" in why and "stays pending" in why
    # a runner that knows it delivers both, in order
    got = [d.event_id for _ in range(2) for d in asker.deliver_messages()]
    assert got == [message_event_id("a", 1, 0), message_event_id("a", 1, 1)]


def test_message_ids_stay_within_the_identifier_bound() -> None:
    long_sender = "s" * 600
    event_id = message_event_id(long_sender, 7, 0)
    assert len(event_id.encode()) <= 512 and event_id.startswith("statekit.message/sha256:")
    assert event_id != message_event_id(long_sender, 7, 1)
    assert len(reply_event_id(event_id).encode()) <= 512


def test_the_store_is_at_schema_11_or_later(store_url: str) -> None:
    assert LATEST >= 11
    assert open_store(store_url).schema_version() == LATEST


def test_the_worker_delivers_messages(store_url: str, tmp_path: Path) -> None:
    asker, counter = _runners(store_url)
    counter.create("c1")
    asker.create("a")
    _send(
        asker.store,
        ("c1", "a", 1, 0, "Incr", {"by": 4}, "Answer"),
        ("c1", "a", 1, 1, "Incr", {"by": 0}, None),
    )
    asker.store.close()
    files = [write_chart(ASKER, tmp_path, "asker"), write_chart(COUNTER, tmp_path, "counter")]
    charts = [a for f in files for a in ("--chart", str(f))]
    done = statekit("worker", "--db", store_url, *charts, "--once")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(x["delivered"], x["instance_id"], x["status"], x["reason"]) for x in lines] == [
        (message_event_id("a", 1, 0), "c1", "APPLIED", None),
        (message_event_id("a", 1, 1), "c1", "REJECTED", "NOT_POSITIVE"),
        (reply_event_id(message_event_id("a", 1, 0)), "a", "APPLIED", None),
    ]
    # a worker that is not given the counter chart leaves nothing to deliver now, and
    # says so about a message it cannot deliver
    again = Runner(chart_from(ASKER), open_store(store_url), charts=[chart_from(COUNTER)])
    assert again.load("a").state.context["answers"] == 1
    _send(again.store, ("c1", "a", 2, 0, "Incr", {"by": 1}, None))
    again.store.close()
    alone = statekit("worker", "--db", store_url, "--chart", str(files[0]), "--once")
    assert alone.returncode == 1 and alone.stdout == ""
    assert "was not given chart 'counter'" in alone.stderr


SENDER = """
statechart: sender
version: 1
description: Sends increments to a counter named by its context, and counts the answers.
context:
  target: {type: string, default: "c1"}
  answers: {type: integer, default: 0}
  last: {type: string, default: ""}
events:
  Go: {by: integer}
  Answer: {status: string, reason: {type: string, nullable: true}}
initial: asking
states:
  asking:
    on:
      Go:
        do:
          - send:
              event: Incr
              payload: {by: event.by}
              to: {chart: counter, instance: ctx.target}
              reply: Answer
          - send:
              event: Incr
              payload: {by: event.by + 1}
              to: {chart: counter, instance: ctx.target}
      Answer:
        do: [{assign: {answers: ctx.answers + 1, last: event.status}}]
"""


def test_a_chart_sends_to_another_instance_through_the_inbox(store_url: str) -> None:
    counter_chart = chart_from(COUNTER)
    store = open_store(store_url)
    sender = Runner(chart_from(SENDER), store, charts=[counter_chart])
    counter = Runner(counter_chart, store)
    counter.create("c1")
    sender.create("s")
    went = sender.apply("s", "g1", "Go", {"by": 2})
    assert went.applied
    # written in the sender's transaction, applied by nobody yet
    assert counter.load("c1").version == 0
    first = sender.deliver_messages(limit=10)  # (the index of a send in its step counts from 1)
    assert [(d.event_id, d.status) for d in first] == [(message_event_id("s", 1, 1), "APPLIED")]
    rest = [d for _ in range(3) for d in sender.deliver_messages(limit=10)]
    assert [(d.event_id, d.status) for d in rest] == [
        (message_event_id("s", 1, 2), "APPLIED"),  # the second message after the first
        (reply_event_id(message_event_id("s", 1, 1)), "APPLIED"),  # the reply, to `s`
    ]
    assert counter.load("c1").state.context["total"] == 2 + 3
    assert sender.load("s").state.context["answers"] == 1
    assert sender.load("s").state.context["last"] == "APPLIED"
    # the sender's event redelivered writes no second message
    assert sender.apply("s", "g1", "Go", {"by": 2}).duplicate
    assert sender.deliver_messages() == []
    for runner, instance_id in ((counter, "c1"), (sender, "s")):
        assert runner.verify(instance_id).ok

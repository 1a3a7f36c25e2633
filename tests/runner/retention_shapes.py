"""Stores of every shape retention meets, each with what was applied to it: no events,
events without a snapshot, snapshots at various sequences, armed timers, outbox
messages pending, claimed, delivered and dead, inbox rows, business keys, rejections."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner_charts import COUNTER, FACTS, LEASE, chart_from

from statekit.engine.chart import Chart
from statekit.runner.outbox import Dispatcher, Inbox, OutboxMessage
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store


@dataclass(frozen=True, slots=True)
class Applied:
    """An event the runner applied: where it was recorded."""

    instance_id: str
    event_id: str
    type: str
    payload: dict[str, Any]
    sequence: int


@dataclass
class Shape:
    """A store built for a test: its runner, chart and the events applied to it."""

    runner: Runner
    chart: Chart
    applied: list[Applied] = field(default_factory=list)

    def apply(self, instance_id: str, event_id: str, type: str, payload: dict[str, Any]) -> None:
        outcome = self.runner.apply(instance_id, event_id, type, payload)
        if outcome.status is OutcomeStatus.APPLIED and outcome.sequence is not None:
            self.applied.append(Applied(instance_id, event_id, type, payload, outcome.sequence))


def _counter(url: str, every: int | None, events: int, instances: int = 1) -> Shape:
    chart = chart_from(COUNTER)
    shape = Shape(Runner(chart, open_store(url), snapshot_every=every), chart)
    for i in range(instances):
        shape.runner.create(f"i{i}")
        for n in range(events):
            shape.apply(f"i{i}", f"e{n}", "Incr", {"by": n + 1})
    return shape


def no_events(url: str) -> Shape:
    return _counter(url, 2, 0)


def events_without_snapshot(url: str) -> Shape:
    return _counter(url, None, 5)


def snapshot_every(every: int, events: int) -> Callable[[str], Shape]:
    def build(url: str) -> Shape:
        return _counter(url, every, events)

    build.__name__ = f"snapshot_every_{every}_of_{events}"
    return build


def timers_armed(url: str) -> Shape:
    chart = chart_from(LEASE)
    clock = iter(range(1_000_000, 2_000_000, 1000))
    shape = Shape(
        Runner(chart, open_store(url), snapshot_every=2, clock=lambda: next(clock)), chart
    )
    shape.runner.create("l")
    for n, event in enumerate(("Start", "Beat", "Snooze", "Beat", "Beat")):
        shape.apply("l", f"e{n}", event, {})
    return shape


def outbox_states(url: str) -> Shape:
    """i0 delivered, i1's head dead then the rest delivered, i2's head claimed, i3 pending."""
    shape = _counter(url, 2, 4, instances=4)
    store = shape.runner.store

    def handle(message: OutboxMessage) -> None:
        if message.instance_id in {"i2", "i3"}:
            raise ConnectionError("not now")
        if message.instance_id == "i1" and message.message_id == "e0/0":
            raise ConnectionError("never")

    Dispatcher(store, {"Counted": handle}, max_attempts=1).run_until_idle()
    with store.write():  # a dispatcher's claim, still held, on i2's head
        store.execute(
            "UPDATE statekit_outbox SET claimed_by = 'elsewhere', claimed_until = 1e12 "
            "WHERE instance_id = 'i2' AND message_id = 'e0/0'"
        )
    with store.write():  # i3 untried: pending, no attempts
        store.execute(
            "UPDATE statekit_outbox SET status = 'pending', attempts = 0, last_error = NULL, "
            "next_attempt_at = 0 WHERE instance_id IN ('i2', 'i3')"
        )
    return shape


def inbox_rows(url: str) -> Shape:
    shape = _counter(url, 3, 4, instances=2)
    inbox = Inbox(shape.runner.store, "billing")

    def consume(message: OutboxMessage) -> None:
        inbox.process(message, lambda connection: None)

    Dispatcher(shape.runner.store, {"Counted": consume}).run_until_idle()
    return shape


def business_keys(url: str) -> Shape:
    chart = chart_from(FACTS)
    shape = Shape(Runner(chart, open_store(url), snapshot_every=2), chart)
    shape.runner.create("t")
    shape.apply("t", "s1", "TaskStarted", {"attempt": 1, "worker": "w"})
    shape.apply("t", "p1", "PAY_SUCCESS", {"channel_ref": "r1", "amount": 5})
    shape.apply("t", "p2", "PAY_SUCCESS", {"channel_ref": "r2", "amount": 7})
    shape.apply("t", "p3", "PAY_SUCCESS", {"channel_ref": "r1", "amount": 5})  # a duplicate
    shape.apply("t", "p4", "PAY_SUCCESS", {"channel_ref": "r3", "amount": 1})
    return shape


def rejections(url: str) -> Shape:
    shape = _counter(url, 2, 3)
    shape.apply("i0", "bad", "Incr", {"by": 0})  # rejected: NOT_POSITIVE, audited
    shape.apply("i0", "e1", "Incr", {"by": 99})  # a payload conflict, audited
    shape.apply("i0", "e9", "Incr", {"by": 1})
    return shape


SHAPES: tuple[Callable[[str], Shape], ...] = (
    no_events,
    events_without_snapshot,
    snapshot_every(1, 1),
    snapshot_every(3, 7),
    snapshot_every(5, 5),
    snapshot_every(4, 9),
    timers_armed,
    outbox_states,
    inbox_rows,
    business_keys,
    rejections,
)

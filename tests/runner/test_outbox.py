"""The outbox dispatcher and the inbox, on SQLite and on PostgreSQL."""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pytest
from runner_charts import COUNTER, chart_from

from statekit.runner.outbox import Dispatcher, Inbox, OutboxMessage
from statekit.runner.runner import Runner
from statekit.runner.store import open_store


def counter_with_messages(url: str, instances: int, events: int) -> Runner:
    runner = Runner(chart_from(COUNTER), open_store(url))
    for i in range(instances):
        runner.create(f"i{i}")
        for n in range(events):
            runner.apply(f"i{i}", f"e{n}", "Incr", {"by": n + 1})
    return runner


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_delivers_each_message_in_order_per_instance(store_url: str) -> None:
    runner = counter_with_messages(store_url, 3, 4)
    seen: list[tuple[str, str, int]] = []
    dispatcher = Dispatcher(
        runner.store, {"Counted": lambda m: seen.append((m.instance_id, m.message_id, m.attempt))}
    )
    report = dispatcher.run_until_idle()
    assert report.delivered == 12 and report.failed == report.dead == 0
    for i in range(3):
        mine = [mid for inst, mid, _ in seen if inst == f"i{i}"]
        assert mine == [f"e{n}/0" for n in range(4)]
    assert runner.store.outbox(["pending", "dead"]) == []
    assert all(r.delivered_at is not None for r in runner.store.outbox(["delivered"]))
    assert dispatcher.dispatch_once().claimed == 0


def test_retries_with_backoff_then_dead_letter(store_url: str) -> None:
    runner = counter_with_messages(store_url, 1, 2)
    clock = Clock()
    calls: list[str] = []

    def fail_first(message: OutboxMessage) -> None:
        calls.append(message.message_id)
        if message.message_id == "e0/0":
            raise ConnectionError("broker down")

    dispatcher = Dispatcher(
        runner.store, {"Counted": fail_first}, max_attempts=3, base_delay=2.0, clock=clock
    )
    assert dispatcher.dispatch_once().failed == 1
    [head, _] = runner.store.outbox(["pending"])
    assert (head.attempts, head.next_attempt_at) == (1, 1002.0)
    assert head.last_error == "ConnectionError: broker down"
    # not due yet, and the later message waits behind it (order per instance)
    assert dispatcher.dispatch_once().claimed == 0
    clock.now = 1002.0
    assert dispatcher.dispatch_once().failed == 1
    assert runner.store.outbox(["pending"])[0].next_attempt_at == 1002.0 + 4.0
    clock.now = 1006.0
    assert dispatcher.dispatch_once().dead == 1
    [dead] = runner.store.outbox(["dead"])
    assert (dead.message_id, dead.attempts) == ("e0/0", 3)
    # a dead message no longer blocks its instance
    assert dispatcher.dispatch_once().delivered == 1
    assert calls == ["e0/0", "e0/0", "e0/0", "e1/0"]
    assert dispatcher.backoff(20) == dispatcher.max_delay


def test_a_missing_handler_is_a_failure(store_url: str) -> None:
    runner = counter_with_messages(store_url, 1, 1)
    report = Dispatcher(runner.store, {}, max_attempts=1).dispatch_once()
    assert report.dead == 1
    assert "no handler" in (runner.store.outbox(["dead"])[0].last_error or "")


def test_a_corrupt_payload_is_a_failed_delivery_not_a_dispatcher_crash(store_url: str) -> None:
    runner = counter_with_messages(store_url, 2, 1)
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_outbox SET payload = '{oops' WHERE instance_id = ?", ("i0",)
        )
    seen: list[str] = []
    dispatcher = Dispatcher(
        runner.store, {"Counted": lambda m: seen.append(m.instance_id)}, max_attempts=1
    )
    report = dispatcher.dispatch_once()
    assert (report.delivered, report.dead) == (1, 1) and seen == ["i1"]
    [dead] = runner.store.outbox(["dead"])
    assert dead.instance_id == "i0" and "payload is not valid JSON" in (dead.last_error or "")


def test_a_crashed_dispatchers_claim_expires(store_url: str) -> None:
    runner = counter_with_messages(store_url, 1, 1)
    clock = Clock()
    crashed = Dispatcher(runner.store, {}, lease=30, clock=clock, name="crashed")
    assert len(runner.store.claim_outbox(crashed.name, clock.now, crashed.lease, 10)) == 1
    seen: list[str] = []
    other = Dispatcher(runner.store, {"Counted": lambda m: seen.append(m.message_id)}, clock=clock)
    assert other.dispatch_once().claimed == 0  # claimed by the crashed one
    clock.now += 31
    assert other.dispatch_once().delivered == 1 and seen == ["e0/0"]


def test_run_until_idle_sleeps_through_another_claim_instead_of_polling(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = counter_with_messages(store_url, 1, 2)
    store = runner.store
    lease = 0.6
    claimed_at = time.time()
    # a dispatcher that crashed holds the head; the message behind it is long due
    assert len(store.claim_outbox("crashed", claimed_at, lease, 10)) == 1
    assert store.next_claimable() == pytest.approx(claimed_at + lease)
    queries: list[str] = []
    execute = store.execute

    def counting(sql: str, params: Sequence[Any] = ()) -> Any:
        queries.append(sql)
        return execute(sql, params)

    monkeypatch.setattr(store, "execute", counting)
    seen: list[str] = []
    dispatcher = Dispatcher(store, {"Counted": lambda m: seen.append(m.message_id)})
    report = dispatcher.run_until_idle()
    assert report.delivered == 2 and seen == ["e0/0", "e1/0"]
    assert time.time() >= claimed_at + lease  # it waited for the lease to end ...
    # ... in one sleep: claim, earliest time; then claim + settle twice; claim, nothing left
    assert len(queries) <= 10, queries
    assert sum("MIN(" in q for q in queries) == 2  # no pending row was loaded to find it
    assert not any("WHERE status IN" in q for q in queries)
    assert store.next_claimable() is None


def test_next_claimable_is_the_later_of_backoff_and_claim(store_url: str) -> None:
    runner = counter_with_messages(store_url, 2, 1)
    store = runner.store
    assert [r.next_attempt_at for r in store.outbox(["pending"])] == [store.next_claimable()] * 2
    [i0, i1] = store.claim_outbox("a", 5000.0, 10.0, 10)
    with store.write():
        store.settle_outbox(
            i0.id, status="pending", attempts=1, next_attempt_at=5020.0, error="later", now=5001.0
        )  # backoff wins
    store.claim_outbox("b", 5001.0, 1.0, 10)  # i1 is still held by "a" until 5010
    assert store.next_claimable() == 5010.0
    with store.write():
        store.settle_outbox(
            i1.id, status="delivered", attempts=1, next_attempt_at=5002.0, error=None, now=5002.0
        )
    assert store.next_claimable() == 5020.0


def test_failing_handler_with_inbox_takes_effect_exactly_once(store_url: str) -> None:
    runner = counter_with_messages(store_url, 4, 6)
    store = runner.store
    with store.write():
        store.execute(
            "CREATE TABLE ledger (instance_id TEXT, message_id TEXT, total INTEGER, "
            "PRIMARY KEY (instance_id, message_id))"
        )
    inbox = Inbox(store, "ledger")
    rng = random.Random(3)
    deliveries: dict[tuple[str, str], int] = defaultdict(int)
    effects: list[tuple[str, str]] = []

    def handle(message: OutboxMessage) -> None:
        deliveries[(message.instance_id, message.message_id)] += 1
        if rng.random() < 0.3:
            raise RuntimeError("consumer unavailable")  # before any effect

        def write(connection: object) -> None:
            store.execute(
                "INSERT INTO ledger VALUES (?, ?, ?)",
                (message.instance_id, message.message_id, message.payload["total"]),
            )

        if inbox.process(message, write):
            effects.append((message.instance_id, message.message_id))
        if rng.random() < 0.3:
            raise TimeoutError("ack lost")  # after the effect: delivered again later

    dispatcher = Dispatcher(store, {"Counted": handle}, max_attempts=50, base_delay=0.0)
    dispatcher.run_until_idle()
    assert store.outbox(["pending", "dead"]) == []
    expected = {(f"i{i}", f"e{n}/0") for i in range(4) for n in range(6)}
    assert set(deliveries) == expected and all(v >= 1 for v in deliveries.values())
    assert sum(deliveries.values()) > len(expected)  # the failures did cause redeliveries
    assert sorted(effects) == sorted(expected)  # each took effect once
    rows = store.execute("SELECT instance_id, message_id, total FROM ledger").fetchall()
    assert len(rows) == len(expected)
    for i in range(4):  # in order per instance: totals grow 1, 3, 6, ...
        mine = [e[1] for e in effects if e[0] == f"i{i}"]
        assert mine == [f"e{n}/0" for n in range(6)]
    again = OutboxMessage("i0", "e0/0", 1, "Counted", {}, 9)
    assert inbox.process(again, lambda connection: effects.append(("again", "!"))) is False
    assert ("again", "!") not in effects


def test_several_dispatchers_deliver_each_message_once(store_url: str) -> None:
    runner = counter_with_messages(store_url, 6, 10)
    lock = threading.Lock()
    delivered: list[tuple[str, str, str]] = []

    def run(name: str) -> None:
        store = open_store(store_url)

        def handle(message: OutboxMessage) -> None:
            with lock:
                delivered.append((name, message.instance_id, message.message_id))

        Dispatcher(store, {"Counted": handle}, batch=4, name=name).run_until_idle()
        store.close()

    threads = [threading.Thread(target=run, args=(f"d{k}",)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = [(inst, mid) for _, inst, mid in delivered]
    assert len(keys) == 60 and len(set(keys)) == 60  # no double delivery
    for i in range(6):
        assert [mid for inst, mid in keys if inst == f"i{i}"] == [f"e{n}/0" for n in range(10)]
    assert runner.store.outbox(["pending"]) == []

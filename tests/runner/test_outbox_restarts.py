"""`Dispatcher` and `Inbox` across a PostgreSQL server restarted (fast and immediate).

- the restart lands while one of the dispatcher's write transactions is held at its
  BEGIN or its COMMIT (`hold_points`): the claim, the first message's inbox transaction
  or its settle (the 1st, 2nd and 3rd write transactions): every message still takes
  effect exactly once and in its instance's order, no attempt is counted against a
  handler, and the claims cut short are released and claimed again at once (the
  dispatcher's clock stands still, so a claim left to its lease would never end);
- `serve` keeps a dispatcher running across two restarts while messages keep coming,
  and returns once stopped.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from runner_charts import COUNTER, chart_from
from store_fixtures import DURABLE_SETTINGS

from statekit.runner.outbox import Dispatcher, Inbox, OutboxMessage
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.hold_points import BEGIN, COMMIT
from statekit.testing.postgres_server import ThrowawayPostgres

INSTANCES, EVENTS = 3, 4  # one message per event
WAIT = 60.0
EFFECTS = (
    "CREATE TABLE effects (id BIGSERIAL PRIMARY KEY, instance_id TEXT NOT NULL, "
    "message_id TEXT NOT NULL)"
)


@pytest.fixture(scope="module")
def server() -> Iterator[ThrowawayPostgres]:
    """A server of this module's own: its tests restart it."""
    with ThrowawayPostgres(DURABLE_SETTINGS) as own:
        yield own


_databases = iter(range(1, 1000))


def _messages(server: ThrowawayPostgres, events: int = EVENTS) -> str:
    """A fresh database with `INSTANCES` counters of `events` messages each, and the
    consumer's `effects` table; its URL."""
    url = server.create_database(f"outbox_{next(_databases)}")
    runner = Runner(chart_from(COUNTER), open_store(url))
    for i in range(INSTANCES):
        runner.create(f"i{i}")
        for n in range(events):
            runner.apply(f"i{i}", f"e{n}", "Incr", {"by": n + 1})
    runner.store.execute(EFFECTS)
    runner.store.close()
    return url


def _consumer(store: Store) -> dict[str, Any]:
    """The handlers of a consumer whose effect is a row of `effects`, written in the
    inbox's transaction."""
    inbox = Inbox(store, "effects")

    def handle(message: OutboxMessage) -> None:
        def write(connection: Any) -> None:
            connection.execute(
                "INSERT INTO effects (instance_id, message_id) VALUES (%s, %s)",
                (message.instance_id, message.message_id),
            )

        inbox.process(message, write)

    return {"Counted": handle}


def _check(url: str, per_instance: int = EVENTS) -> None:
    """Every message delivered, at its first attempt, its effect taken once, in order."""
    with psycopg.connect(url, autocommit=True) as conn:
        outbox = conn.execute(
            "SELECT instance_id, message_id, status, attempts FROM statekit_outbox ORDER BY id"
        ).fetchall()
        effects = conn.execute("SELECT instance_id, message_id FROM effects ORDER BY id").fetchall()
    assert len(outbox) == INSTANCES * per_instance
    assert {(status, attempts) for _, _, status, attempts in outbox} == {("delivered", 1)}
    emitted: dict[str, list[str]] = defaultdict(list)
    for instance, message, _, _ in outbox:
        emitted[instance].append(message)
    taken: dict[str, list[str]] = defaultdict(list)
    for instance, message in effects:
        taken[instance].append(message)
    assert taken == emitted


@pytest.mark.parametrize("mode", ["fast", "immediate"])
@pytest.mark.parametrize("nth", [1, 2, 3], ids=["claim", "inbox", "settle"])
@pytest.mark.parametrize("point", [BEGIN, COMMIT])
def test_a_restart_in_any_dispatcher_transaction_delivers_each_message_once(
    server: ThrowawayPostgres, point: str, nth: int, mode: str
) -> None:
    url = _messages(server)
    store = open_store(url)
    reached = 0

    def hold(at: str) -> None:
        nonlocal reached
        if at == point:
            reached += 1
            if reached == nth:
                server.restart(mode)  # the dispatcher's connection goes while held here

    store.hold = hold
    now = time.time() + 1.0  # every message is due; no claim ever reaches its lease's end
    dispatcher = Dispatcher(store, _consumer(store), clock=lambda: now)
    report = dispatcher.run_until_idle(wait=False)
    store.close()
    assert reached >= nth
    assert report.delivered == INSTANCES * EVENTS and report.failed == report.dead == 0
    _check(url)


def test_serve_keeps_delivering_across_restarts_until_stopped(server: ThrowawayPostgres) -> None:
    url = _messages(server, events=1)
    store = open_store(url)
    stop = threading.Event()
    served = threading.Thread(
        target=Dispatcher(store, _consumer(store)).serve, args=(stop,), kwargs={"poll": 0.05}
    )
    served.start()
    try:
        for n, mode in enumerate(["fast", "immediate"], start=1):
            _delivered(url, INSTANCES * n)  # everything so far, before the restart
            server.restart(mode)
            writer = Runner(chart_from(COUNTER), open_store(url))
            for i in range(INSTANCES):  # new messages, after it
                writer.apply(f"i{i}", f"after{n}", "Incr", {"by": 1})
            writer.store.close()
        _delivered(url, INSTANCES * 3)
    finally:
        stop.set()
        served.join(WAIT)
    assert not served.is_alive()
    store.close()
    _check(url, per_instance=3)


def _delivered(url: str, count: int) -> None:
    """Until `count` messages are delivered (polled on the database: an observable state)."""
    deadline = time.monotonic() + WAIT
    while True:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM statekit_outbox WHERE status = 'delivered'"
            ).fetchone()
        if row is not None and row[0] >= count:
            return
        assert time.monotonic() < deadline, (row, count)
        time.sleep(0.02)

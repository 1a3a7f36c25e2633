"""The async runner is the sync runner awaited: the same stream leaves the same bytes in
every table of both stores, and the same errors, as statekit errors."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from runner_charts import COUNTER, chart_from
from stored_tables import stored_tables

from statekit.aio import AsyncDispatcher, AsyncRunner
from statekit.runner.errors import InstanceExistsError, UnknownInstanceError
from statekit.runner.instance import RecordedEvent
from statekit.runner.outbox import Dispatcher, OutboxMessage
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.transaction import Command
from statekit.testing.postgres_server import ThrowawayPostgres

_names = itertools.count(1)
TwoStores = tuple[str, str]


@pytest.fixture(params=["sqlite", "postgresql"])
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> TwoStores:
    """Two fresh, empty stores of one kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sync.db'}", f"sqlite:///{tmp_path / 'async.db'}"
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    n = next(_names)
    return server.create_database(f"aio_sync_{n}"), server.create_database(f"aio_async_{n}")


def ticking(start: int) -> Callable[[], int]:
    """A clock that moves on one millisecond per reading (the same readings in each run)."""
    readings = itertools.count(start)
    return lambda: next(readings)


def dispatch_clock() -> Callable[[], float]:
    """The dispatcher's clock (epoch seconds), the same readings in each run."""
    readings = ticking(5_000)
    return lambda: float(readings())


# The stream: creations, accepted, rejected (guard), duplicate, payload conflict, version
# conflict, already-applied, a batch, a group commit over three instances, a snapshot.
ONE_BY_ONE: list[tuple[str, str, str, dict[str, int] | None, int | None]] = [
    ("a", "e1", "Incr", {"by": 2}, None),
    ("a", "e2", "Incr", {"by": -1}, None),
    ("a", "e1", "Incr", {"by": 2}, None),
    ("a", "e1", "Incr", {"by": 3}, None),
    ("a", "e3", "Incr", {"by": 1}, 0),
    ("a", "e4", "Ping", {}, None),
    ("b", "e1", "Incr", {"by": 5}, 0),
]
BATCH = [Command("b2", "Incr", {"by": 1}), Command("b3", "Incr", {"by": 0}), Command("b4", "Ping")]
MANY = [
    ("a", Command("m1", "Incr", {"by": 4})),
    ("c", Command("m2", "Incr", {"by": 6})),
    ("b", Command("m3", "Incr", {"by": 7})),
    ("zz", Command("m4", "Incr", {"by": 1})),
]


def failing_once() -> Callable[[OutboxMessage], None]:
    """A handler that fails the first delivery of each message of instance b."""
    seen: set[str] = set()

    def handle(message: OutboxMessage) -> None:
        if message.instance_id == "b" and message.message_id not in seen:
            seen.add(message.message_id)
            raise RuntimeError("the consumer is away")

    return handle


def run_sync(url: str) -> list[object]:
    chart = chart_from(COUNTER)
    answers: list[object] = []
    with open_store(url) as store:
        runner = Runner(chart, store, clock=ticking(1_000))
        for name, context in (("a", None), ("b", {"total": 10}), ("c", None)):
            answers.append(runner.create(name, context))
        for instance_id, event_id, kind, payload, expected in ONE_BY_ONE:
            answers.append(runner.apply(instance_id, event_id, kind, payload, expected))
        answers.append(runner.apply_batch("b", BATCH))
        answers.append([_item(i) for i in runner.apply_many(MANY)])
        answers.append(runner.snapshot("a"))
        answers.append(_timeless(runner.history("a")))
        with pytest.raises(UnknownInstanceError) as unknown:
            runner.apply("nobody", "e1", "Ping")
        with pytest.raises(InstanceExistsError) as exists:
            runner.create("a")
        answers += [str(unknown.value), str(exists.value)]
        handle = failing_once()
        dispatcher = Dispatcher(store, {}, default=handle, name="d", clock=dispatch_clock())
        answers.append(dispatcher.run_until_idle(wait=False))
    return answers


async def run_async(url: str) -> list[object]:
    chart = chart_from(COUNTER)
    answers: list[object] = []
    async with await AsyncRunner.open(chart, url, connections=3, clock=ticking(1_000)) as runner:
        for name, context in (("a", None), ("b", {"total": 10}), ("c", None)):
            answers.append(await runner.create(name, context))
        for instance_id, event_id, kind, payload, expected in ONE_BY_ONE:
            answers.append(await runner.apply(instance_id, event_id, kind, payload, expected))
        answers.append(await runner.apply_batch("b", BATCH))
        answers.append([_item(i) for i in await runner.apply_many(MANY)])
        answers.append(await runner.snapshot("a"))
        answers.append(_timeless(await runner.history("a")))
        with pytest.raises(UnknownInstanceError) as unknown:
            await runner.apply("nobody", "e1", "Ping")
        with pytest.raises(InstanceExistsError) as exists:
            await runner.create("a")
        answers += [str(unknown.value), str(exists.value)]
    handle = failing_once()

    async def deliver(message: OutboxMessage) -> None:
        await asyncio.sleep(0)  # a handler awaits on the loop
        handle(message)

    async with await AsyncDispatcher.open(
        url, {}, default=deliver, name="d", clock=dispatch_clock()
    ) as dispatcher:
        answers.append(await dispatcher.run_until_idle(wait=False))
    return answers


def _timeless(events: list[RecordedEvent]) -> list[RecordedEvent]:
    """A history without its wall-clock times (`stored_tables.WALL_CLOCK`)."""
    return [replace(event, recorded_at=0.0) for event in events]


def _item(item: object) -> object:
    """A group commit's answer as comparable text (an exception compares by identity)."""
    return repr(item) if isinstance(item, Exception) else item


def test_the_same_stream_stores_the_same_bytes(two_stores: TwoStores) -> None:
    sync_url, async_url = two_stores
    sync_answers = run_sync(sync_url)
    async_answers = asyncio.run(run_async(async_url))
    assert async_answers == sync_answers
    sync_tables, async_tables = stored_tables(sync_url), stored_tables(async_url)
    assert sorted(async_tables) == sorted(sync_tables)
    filled = {t for t, rows in sync_tables.items() if rows}
    assert {"statekit_events", "statekit_rejections", "statekit_outbox",
            "statekit_snapshots", "statekit_instances"} <= filled  # fmt: skip
    for table in sorted(sync_tables):
        assert async_tables[table] == sync_tables[table], table


def test_concurrent_callers_on_many_connections(store_url: str) -> None:
    """100 instances advanced at once over 4 connections: every event of each instance in
    the order its caller awaited them."""

    async def main() -> list[list[str]]:
        chart = chart_from(COUNTER)
        async with await AsyncRunner.open(chart, store_url, connections=4) as runner:

            async def advance(n: int) -> list[str]:
                await runner.create(f"i{n}")
                for k in range(5):
                    outcome = await runner.apply(f"i{n}", f"e{k}", "Incr", {"by": k + 1})
                    assert outcome.status is OutcomeStatus.APPLIED
                return [event.event_id for event in await runner.history(f"i{n}")]

            return await asyncio.gather(*(advance(n) for n in range(100)))

    histories = asyncio.run(main())
    assert histories == [[f"e{k}" for k in range(5)]] * 100


def test_a_closed_runner_says_so(store_url: str) -> None:
    async def main() -> None:
        runner = await AsyncRunner.open(chart_from(COUNTER), store_url)
        await runner.close()
        with pytest.raises(RuntimeError, match="closed"):
            await runner.create("a")

    asyncio.run(main())

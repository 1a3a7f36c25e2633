"""`AsyncRunner`: the durable runner for asyncio code, the sync `Runner` on its own threads.

    runner = await statekit.aio.AsyncRunner.open(chart, "postgresql://…", connections=4)
    await runner.create("order-1")
    outcome = await runner.apply("order-1", "evt-1", "OrderPlaced", {"total": 12})
    await runner.close()

Every call is the sync runner's (`statekit.runner.runner.Runner`) on a
`ConnectionThread` holding that runner's store: the same decisions, statements,
stored bytes, errors and retry policy (a lost connection healed as `runner.retrying`
does, `StoreUnavailableError` once the server stayed away for the URL's `retry_for`).
With `connections=N` the runner holds N connections, each on its thread; an
instance's calls always go to the same one (by a hash of its ID), so the calls made
for one instance run in the order they were made and the row it committed last
stays the connection's (`runner.row_cache`), while instances on different
connections are written at once (PostgreSQL; SQLite serialises its writers anyway).
Calls without an instance (`apply_many`, `fire_due`) go to the first connection.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from statekit.aio.connection_thread import ConnectionThread
from statekit.aio.in_transaction import AsyncRunnerInTransaction, in_transaction
from statekit.engine.chart import Chart
from statekit.runner.group_commit import Item
from statekit.runner.instance import Instance, RecordedEvent
from statekit.runner.migration import MigrationReport
from statekit.runner.outcome import Conflict, Outcome
from statekit.runner.runner import Runner
from statekit.runner.snapshots import Rebuilt
from statekit.runner.store import open_store
from statekit.runner.transaction import Command
from statekit.runner.verify import VerifyReport


class _Lane:
    """One connection: its thread and the sync runner over the store it opened."""

    __slots__ = ("runner", "thread")

    def __init__(self, thread: ConnectionThread, runner: Runner) -> None:
        self.thread, self.runner = thread, runner


async def _open_lane(
    index: int,
    chart: Chart,
    url: str,
    runner_options: dict[str, Any],
    store_options: dict[str, Any],
) -> _Lane:
    thread = ConnectionThread(f"statekit-aio-{index}")

    def build() -> Runner:  # on the lane's thread: the connection is made by its user
        store = open_store(url, **store_options)
        try:
            return Runner(chart, store, **runner_options)
        except BaseException:
            store.close()
            raise

    try:
        runner = await thread.run(build)
    except BaseException:
        thread.shutdown()
        raise
    return _Lane(thread, runner)


class AsyncRunner:
    """Durable instances of one chart in one store, for asyncio code (see the module
    docstring); made by `AsyncRunner.open`, ended by `close` (or `async with`)."""

    def __init__(self, lanes: list[_Lane]) -> None:
        if not lanes:
            raise ValueError("an AsyncRunner needs at least one connection")
        self._lanes = lanes
        self.chart = lanes[0].runner.chart

    @classmethod
    async def open(
        cls,
        chart: Chart,
        url: str,
        *,
        connections: int = 1,
        previous: Iterable[Chart] = (),
        snapshot_every: int | None = None,
        clock: Callable[[], int] | None = None,
        **store_options: Any,
    ) -> AsyncRunner:
        """Open `connections` connections to the store at `url` (`open_store`, with
        `store_options`), each with a `Runner(chart, store, previous=…,
        snapshot_every=…, clock=…)` on a thread of its own. The connections are opened
        one after another (the first creates or upgrades the schema)."""
        if connections < 1:
            raise ValueError("connections must be at least 1")
        runner_options: dict[str, Any] = {
            "previous": tuple(previous), "snapshot_every": snapshot_every, "clock": clock,
        }  # fmt: skip
        lanes: list[_Lane] = []
        try:
            for index in range(connections):
                lanes.append(await _open_lane(index, chart, url, runner_options, store_options))
        except BaseException:
            for lane in lanes:
                await _close_lane(lane)
            raise
        return cls(lanes)

    @property
    def connections(self) -> int:
        """How many connections (and threads) this runner holds."""
        return len(self._lanes)

    @property
    def sync_runners(self) -> tuple[Runner, ...]:
        """The sync runner of each connection, in order. Each belongs to its thread: call
        nothing of it from the event loop (its store's test holds, `hold_points`, are
        installed through it)."""
        return tuple(lane.runner for lane in self._lanes)

    def _first(self) -> _Lane:
        if not self._lanes:
            raise RuntimeError("this AsyncRunner is closed")
        return self._lanes[0]

    def _lane(self, instance_id: str) -> _Lane:
        lanes = self._lanes
        if not lanes:
            raise RuntimeError("this AsyncRunner is closed")
        if len(lanes) == 1:
            return lanes[0]
        return lanes[zlib.crc32(instance_id.encode("utf-8", "surrogatepass")) % len(lanes)]

    # ---- instances ---------------------------------------------------------------------
    async def create(
        self, instance_id: str, context: Mapping[str, Any] | None = None, *, exist_ok: bool = False
    ) -> Instance:
        """`Runner.create`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.create, instance_id, context, exist_ok=exist_ok)

    async def load(self, instance_id: str) -> Instance:
        """`Runner.load`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.load, instance_id)

    async def history(self, instance_id: str) -> list[RecordedEvent]:
        """`Runner.history`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.history, instance_id)

    async def rejections(self, instance_id: str) -> list[dict[str, Any]]:
        """`Runner.rejections`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.rejections, instance_id)

    # ---- events ------------------------------------------------------------------------
    async def apply(
        self,
        instance_id: str,
        event_id: str,
        type: str,
        payload: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
        sequence: int | None = None,
        *,
        after_conflict: Conflict | None = None,
    ) -> Outcome:
        """`Runner.apply`: one event in one transaction, classified (`Outcome`)."""
        lane = self._lane(instance_id)
        return await lane.thread.run(
            lane.runner.apply, instance_id, event_id, type, payload, expected_version, sequence,
            after_conflict=after_conflict,
        )  # fmt: skip

    async def apply_batch(self, instance_id: str, commands: Iterable[Command]) -> list[Outcome]:
        """`Runner.apply_batch`: many events of one instance in one transaction."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.apply_batch, instance_id, list(commands))

    async def apply_many(self, commands: Iterable[tuple[str, Command]]) -> list[Item]:
        """`Runner.apply_many`: events of many instances in one transaction (group commit),
        on the first connection."""
        lane = self._first()
        return await lane.thread.run(lane.runner.apply_many, list(commands))

    async def migrate(self, instance_id: str, *, dry_run: bool = False) -> MigrationReport:
        """`Runner.migrate`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.migrate, instance_id, dry_run=dry_run)

    async def snapshot(self, instance_id: str) -> int:
        """`Runner.snapshot`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.snapshot, instance_id)

    async def rebuild(self, instance_id: str) -> Rebuilt:
        """`Runner.rebuild`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.rebuild, instance_id)

    async def verify(self, instance_id: str) -> VerifyReport:
        """`Runner.verify`."""
        lane = self._lane(instance_id)
        return await lane.thread.run(lane.runner.verify, instance_id)

    def in_transaction(self, conn: Any) -> AbstractAsyncContextManager[AsyncRunnerInTransaction]:
        """`Runner.in_transaction`, awaited: an `async with` block whose calls write on
        `conn` (a `psycopg.AsyncConnection`, an aiosqlite connection opened with
        `check_same_thread=False`, or a SQLAlchemy `AsyncConnection` or `AsyncSession` over
        either) in the application's transaction, which commits or
        rolls back statekit's rows with its own (`statekit.aio.in_transaction`). Its
        calls run on a thread of the block's own."""
        lane = self._first()
        return in_transaction(lane.runner, lane.thread, conn)

    # ---- time --------------------------------------------------------------------------
    async def fire_due(self, now_ms: int | None = None, limit: int = 1000) -> list[Outcome]:
        """`Runner.fire_due`, on the first connection."""
        lane = self._first()
        return await lane.thread.run(lane.runner.fire_due, now_ms, limit)

    # ---- the end -----------------------------------------------------------------------
    async def close(self) -> None:
        """Close every connection once the calls already made have run; ends the threads."""
        lanes, self._lanes = self._lanes, []
        for lane in lanes:
            await _close_lane(lane)

    async def __aenter__(self) -> AsyncRunner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncRunner({self.chart.name!r}, connections={len(self._lanes)})"


async def _close_lane(lane: _Lane) -> None:
    try:
        await lane.thread.run(lane.runner.store.close)
    finally:
        lane.thread.shutdown()

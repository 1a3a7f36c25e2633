"""A lost PostgreSQL server is the sync runner's statekit error through the async runner
too, never a driver's exception, and the runner heals once the server is back; the
event loop goes on running while a call waits for the database."""

from __future__ import annotations

import asyncio

import pytest
from runner_charts import COUNTER, chart_from

from statekit.aio import AsyncRunner
from statekit.runner.errors import StoreUnavailableError
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.store.hold_points import COMMIT, DECIDED
from statekit.testing.postgres_server import ThrowawayPostgres


@pytest.mark.parametrize("at", [DECIDED, COMMIT])
def test_a_server_away_for_longer_than_retry_for(
    restartable_server: ThrowawayPostgres, restartable_url: str, at: str
) -> None:
    halted: list[str] = []

    def halt_once(point: str) -> None:
        if point == at and not halted:
            halted.append(point)
            restartable_server.halt("fast")

    async def main() -> tuple[str, OutcomeStatus, list[str]]:
        url = restartable_url + "?retry_for=0.5"
        async with await AsyncRunner.open(chart_from(COUNTER), url) as runner:
            await runner.create("a")
            (sync_runner,) = runner.sync_runners
            sync_runner.store.hold = halt_once
            try:
                with pytest.raises(StoreUnavailableError) as caught:
                    await runner.apply("a", "e1", "Incr", {"by": 1})
            finally:
                restartable_server.resume()
            sync_runner.store.hold = None
            again = await runner.apply("a", "e1", "Incr", {"by": 1})  # healed
            history = [e.event_id for e in await runner.history("a")]
            return str(caught.value), again.status, history

    message, status, history = asyncio.run(main())
    assert "?retry_for=SECONDS" in message
    assert ("commit took effect is unknown" in message) == (at == COMMIT)
    # the server stopped before the COMMIT was sent: nothing of the first call is stored
    assert status is OutcomeStatus.APPLIED
    assert history == ["e1"]


def test_the_loop_runs_while_a_call_waits_for_the_database(store_url: str) -> None:
    """A call held inside its transaction (a test hold) does not stop other tasks."""

    async def main() -> list[str]:
        async with await AsyncRunner.open(chart_from(COUNTER), store_url) as runner:
            await runner.create("a")
            loop = asyncio.get_running_loop()
            reached, release = asyncio.Event(), asyncio.Event()
            order: list[str] = []

            def hold(point: str) -> None:  # on the runner's thread
                if point == DECIDED:
                    loop.call_soon_threadsafe(reached.set)
                    asyncio.run_coroutine_threadsafe(release.wait(), loop).result()

            (sync_runner,) = runner.sync_runners
            sync_runner.store.hold = hold
            call = asyncio.ensure_future(runner.apply("a", "e1", "Incr", {"by": 1}))
            await reached.wait()
            order.append("the loop ran while the transaction was open")
            release.set()
            outcome = await call
            sync_runner.store.hold = None
            order.append(outcome.status.name)
            return order

    assert asyncio.run(main()) == ["the loop ran while the transaction was open", "APPLIED"]

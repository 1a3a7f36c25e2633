"""`AsyncDispatcher`: coroutine handlers, at least once and in order per instance, a
failing handler retried as the sync dispatcher does, `serve` stopped by an event."""

from __future__ import annotations

import asyncio

from runner_charts import COUNTER, chart_from

from statekit.aio import AsyncDispatcher, AsyncRunner
from statekit.runner.outbox import OutboxMessage


def test_serve_delivers_in_order_per_instance_until_stopped(store_url: str) -> None:
    async def main() -> tuple[dict[str, list[int]], int, int]:
        async with await AsyncRunner.open(chart_from(COUNTER), store_url, connections=2) as runner:
            for name in ("a", "b"):
                await runner.create(name)
                for k in range(1, 4):
                    await runner.apply(name, f"e{k}", "Incr", {"by": k})
        seen: dict[str, list[int]] = {"a": [], "b": []}
        failed_once: set[str] = set()
        stop = asyncio.Event()

        async def counted(message: OutboxMessage) -> None:
            await asyncio.sleep(0)
            if message.message_id == "e2/0" and message.instance_id not in failed_once:
                failed_once.add(message.instance_id)
                raise RuntimeError("the consumer is away")  # retried after its backoff
            seen[message.instance_id].append(message.payload["by"])
            if sum(map(len, seen.values())) == 6:
                stop.set()

        async with await AsyncDispatcher.open(
            store_url, {"Counted": counted}, base_delay=0.01
        ) as dispatcher:
            report = await asyncio.wait_for(dispatcher.serve(stop, poll=0.05), 60)
        return seen, report.delivered, report.failed

    seen, delivered, failed = asyncio.run(main())
    assert seen == {"a": [1, 2, 3], "b": [1, 2, 3]}
    assert (delivered, failed) == (6, 2)

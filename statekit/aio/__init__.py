"""The durable runner and the outbox dispatcher for asyncio code (FastAPI, Starlette,
aiohttp, asyncio workers).

`AsyncRunner` and `AsyncDispatcher` are the sync `Runner` and `Dispatcher` run on a
thread per connection (`connection_thread`) and awaited: the event loop never waits
for the database, and every decision, statement, stored byte and error is the sync
runner's (docs/async.md).
"""

from __future__ import annotations

from statekit.aio.dispatcher import AsyncDispatcher, AsyncHandler
from statekit.aio.in_transaction import AsyncRunnerInTransaction
from statekit.aio.runner import AsyncRunner

__all__ = ["AsyncDispatcher", "AsyncHandler", "AsyncRunner", "AsyncRunnerInTransaction"]

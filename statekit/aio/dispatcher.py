"""`AsyncDispatcher`: the outbox delivered to coroutine handlers, by the sync `Dispatcher`.

    dispatcher = await AsyncDispatcher.open(url, {"OrderPaid": notify})  # async def notify
    await dispatcher.run_until_idle()
    await dispatcher.close()

Claims, settles, leases, backoff, dead messages and the handling of a lost connection
are `statekit.runner.outbox.Dispatcher`'s, run on a `ConnectionThread` that holds the
dispatcher's own connection. A handler is a coroutine function: the thread hands
each claimed message to the event loop and waits for the handler there, so the
handler may await anything (an HTTP call, a broker) and a message is marked
delivered only once its handler returned, as with the sync dispatcher. The
dispatcher has a connection of its own, never a runner's: a handler that awaits an
`AsyncRunner` call waits for another thread, not for its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from statekit.aio.connection_thread import ConnectionThread
from statekit.runner.outbox import Dispatcher, DispatchReport, Handler, OutboxMessage
from statekit.runner.store import open_store

AsyncHandler = Callable[[OutboxMessage], Awaitable[object]]


def _on_loop(handler: AsyncHandler, loop: asyncio.AbstractEventLoop) -> Handler:
    """`handler` as the sync dispatcher calls it, on its thread: awaited on `loop`."""

    def deliver(message: OutboxMessage) -> object:
        return asyncio.run_coroutine_threadsafe(_awaited(handler, message), loop).result()

    return deliver


async def _awaited(handler: AsyncHandler, message: OutboxMessage) -> object:
    return await handler(message)


class AsyncDispatcher:
    """Delivers the outbox to coroutine handlers (see the module docstring); made by
    `AsyncDispatcher.open`, ended by `close` (or `async with`)."""

    def __init__(self, thread: ConnectionThread, dispatcher: Dispatcher) -> None:
        self._thread, self.dispatcher = thread, dispatcher

    @classmethod
    async def open(
        cls,
        url: str,
        handlers: Mapping[str, AsyncHandler],
        *,
        default: AsyncHandler | None = None,
        store_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> AsyncDispatcher:
        """A dispatcher over its own connection to the store at `url` (`open_store` with
        `store_options`); `options` are the `Dispatcher`'s (`max_attempts`,
        `base_delay`, `max_delay`, `lease`, `batch`, `name`, `clock`)."""
        loop = asyncio.get_running_loop()
        bridged = {kind: _on_loop(handler, loop) for kind, handler in handlers.items()}
        fallback = None if default is None else _on_loop(default, loop)
        thread = ConnectionThread("statekit-aio-dispatcher")

        def build() -> Dispatcher:
            store = open_store(url, **dict(store_options or {}))
            try:
                return Dispatcher(store, bridged, default=fallback, **options)
            except BaseException:
                store.close()
                raise

        try:
            dispatcher = await thread.run(build)
        except BaseException:
            thread.shutdown()
            raise
        return cls(thread, dispatcher)

    async def dispatch_once(self) -> DispatchReport:
        """`Dispatcher.dispatch_once`: claim a batch and deliver each message."""
        return await self._thread.run(self.dispatcher.dispatch_once)

    async def run_until_idle(
        self, *, max_rounds: int | None = None, wait: bool = True
    ) -> DispatchReport:
        """`Dispatcher.run_until_idle` (its waits are the thread's, never the loop's)."""
        return await self._thread.run(
            self.dispatcher.run_until_idle, max_rounds=max_rounds, wait=wait
        )

    async def serve(self, stop: asyncio.Event, *, poll: float = 1.0) -> DispatchReport:
        """`Dispatcher.serve` until `stop` is set: the round under way is finished first."""
        stopped = threading.Event()

        async def relay_stop() -> None:
            await stop.wait()
            stopped.set()

        watcher = asyncio.ensure_future(relay_stop())
        try:
            return await self._thread.run(self.dispatcher.serve, stopped, poll=poll)
        finally:
            stopped.set()
            watcher.cancel()

    async def close(self) -> None:
        """Close the connection and end the thread."""
        try:
            await self._thread.run(self.dispatcher.store.close)
        finally:
            self._thread.shutdown()

    async def __aenter__(self) -> AsyncDispatcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

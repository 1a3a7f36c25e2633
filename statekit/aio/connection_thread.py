"""`ConnectionThread`: one thread that owns one database connection, awaited from asyncio.

The async runner does not have a second store: it runs the sync runner, whose store
(`statekit.runner.store`) and decisions it shares, on a thread of its own, and awaits
each call. A connection is used by one thread at a time (as the sync runner's rule
is: one connection per thread), so each connection gets one thread for its whole
life, and the calls awaited on it run one after another in the order they were
made. The event loop never waits for the database; the thread does.

Why a thread per connection rather than an async driver's statements
(docs/async.md, `bench/async_runner.py`): one event costs one hop between the loop
and the thread, however many statements its transaction sends, and the statements,
their order and their errors are the sync runner's, byte for byte.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class ConnectionThread:
    """One thread for one connection: `await run(fn, *args)` calls `fn` on it, after the
    calls awaited before it, and gives its result or raises its exception."""

    __slots__ = ("_executor",)

    def __init__(self, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(*args, **kwargs)` on this thread. A task cancelled while it waits does not
        stop the call: a call that began runs to its end (its transaction commits or
        rolls back whole), only its answer is lost, as a lost response would be."""
        loop = asyncio.get_running_loop()
        call = functools.partial(fn, *args, **kwargs) if args or kwargs else fn
        return await loop.run_in_executor(self._executor, call)

    async def run_to_end(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`run`, except that a task cancelled while it waits goes on waiting until the
        call has ended, and only then is cancelled: for a call on a connection the
        caller uses again once it stops waiting (the application's, in
        `AsyncRunner.in_transaction`), which must never be used by two threads at once."""
        call = asyncio.ensure_future(self.run(fn, *args, **kwargs))
        cancelled = False
        while True:
            try:
                result = await asyncio.shield(call)
            except asyncio.CancelledError:
                if call.done():
                    raise  # the call has ended: nothing uses the connection any more
                cancelled = True
                continue
            if cancelled:
                raise asyncio.CancelledError
            return result

    def shutdown(self) -> None:
        """End the thread once the calls already made have run."""
        self._executor.shutdown(wait=True)

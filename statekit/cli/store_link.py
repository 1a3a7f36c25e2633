"""A long-running command's store across a server that is down, starting or restarting.

`statekit worker` opens its store through a `StoreLink`: while the server cannot be
reached (refused, starting up, shutting down) it says so once on standard error and
waits, retrying with the store's connection policy's backoff
(`store.connection_policy`: 50 ms doubling to 2 s), for as long as the URL's
`?retry_for=` says, and without end when the URL says nothing (a worker is a daemon: a
service manager may start it before its database, and a database may be down for
longer than a request would wait). When a connection is lost in the middle of its
work, the link closes the broken store and opens it again the same way. The waiting
is the link's, not the store's (it opens PostgreSQL stores with `retry_for=0`), so
that every wait ends at once when the command's stop event is set (SIGTERM), and the
command then exits 0.

Nothing is decided here about what was under way when the connection went: the
command goes on from what the database holds (a timer row is consumed by the
transaction that delivers it, so a delivery whose commit was lost either happened
once or is still due).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import IO, TypeVar
from urllib.parse import parse_qs, urlsplit

from statekit.runner.errors import RunnerError, StoreUnavailableError
from statekit.runner.outbox import lost_connection
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.connection_policy import split_policy

T = TypeVar("T")


class StoreLink:
    """Opens the store at `url` for `command`, waiting for the server (module docstring).

    `stop`: set by the command's signal handler; every wait ends then. How long to
    wait is the URL's `?retry_for=` (without end when it says nothing).
    """

    def __init__(
        self,
        url: str,
        command: str,
        stop: threading.Event,
        err: IO[str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url, self.command, self.stop, self.err = url, command, stop, err
        self.policy, _ = split_policy(url)
        stated = "retry_for" in parse_qs(urlsplit(url).query)
        self.retry_for = self.policy.retry_for if stated else None
        postgres = urlsplit(url).scheme.lower() in ("postgresql", "postgres")
        # the store gives up at once (the link waits, stoppably); SQLite has nothing to wait for
        self.options: dict[str, float] = {"retry_for": 0.0} if postgres else {}
        self.clock = clock

    def say(self, text: str) -> None:
        self.err.write(f"statekit {self.command}: {text}\n")
        self.err.flush()

    def open(self, ready: Callable[[Store], T]) -> tuple[Store, T] | None:
        """The store opened and `ready(store)` (what the command builds on it: runners),
        once the server answers; None when stopped while waiting. A lost connection
        during `ready` counts as not reached yet."""
        began = self.clock()
        attempt, told = 0, False
        while not self.stop.is_set():
            try:
                store = open_store(self.url, **self.options)
            except RunnerError as exc:
                if not lost_connection(exc):
                    raise
                failure: BaseException = exc
            else:
                try:
                    return store, ready(store)
                except Exception as exc:
                    _close_quietly(store)
                    if not lost_connection(exc):
                        raise
                    failure = exc
            if not told:
                self.say(
                    f"the store cannot be reached ({_why(failure)}); waiting for the server "
                    "(SIGTERM stops it)"
                )
                told = True
            if self.retry_for is not None and self.clock() - began >= self.retry_for:
                raise StoreUnavailableError(
                    f"the store could not be reached for {self.retry_for:g} s ({_why(failure)}): "
                    "check that the server is running and accepts connections there, or wait "
                    "longer with ?retry_for=SECONDS in the store URL (without it, the "
                    f"{self.command} waits without end)"
                )
            self.stop.wait(self.policy.backoff(attempt))
            attempt += 1
        return None

    def reopen(
        self, broken: Store, exc: BaseException, ready: Callable[[Store], T]
    ) -> tuple[Store, T] | None:
        """After `exc` (a lost connection) broke `broken`: close it, say so, and `open`
        again; None when stopped while waiting."""
        _close_quietly(broken)
        self.say(f"lost the connection to the store ({_why(exc)}); reconnecting")
        opened = self.open(ready)
        if opened is not None:
            self.say("reconnected to the store; going on")
        return opened


def _why(exc: BaseException) -> str:
    """The first line of what the database or the driver said (a driver's messages run
    over lines), without the advice of a store that gave up (the link says its own)."""
    while isinstance(exc, StoreUnavailableError) and exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip().splitlines()
    words = text[0] if text else type(exc).__name__
    return words.removeprefix("connection failed: ")


def _close_quietly(store: Store) -> None:
    with suppress(Exception):  # a broken connection may refuse to close: it is gone anyway
        store.close()

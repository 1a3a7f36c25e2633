"""A long-running command's store across a server that is down, starting or restarting.

`statekit worker` opens its store through a `StoreLink`: while the server cannot be
reached (refused, starting up, shutting down) it says so once on standard error and
waits, retrying with a bounded backoff (`WAIT_FIRST` doubling to `WAIT_LAST`), for as
long as the URL's `?retry_for=` allows (a worker's default: without end, as a service
manager expects of a daemon started before its database). When a connection is lost
in the middle of its work, the link closes the broken store and opens it again the
same way. Every wait ends at once when the command's stop event is set (SIGTERM), and
the command then exits 0.

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

from statekit.runner.errors import RunnerError
from statekit.runner.store import open_store
from statekit.runner.store.base import Store

WAIT_FIRST, WAIT_LAST = 0.05, 2.0
"""The sleeps, in seconds, between attempts to reach the server: doubled from the first
to the last (a restart is typically over in well under a second; a server that stays
down is asked every two seconds)."""

T = TypeVar("T")


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc` says that the database could not be reached or its connection
    dropped (the server shut down, restarted, or is starting), as opposed to anything
    the command did: on PostgreSQL a driver's operational or interface error, or a
    statekit error caused by one."""
    seen: BaseException | None = exc
    while seen is not None:
        kind = type(seen)
        if kind.__name__ == "StoreUnavailableError":
            return True
        if kind.__module__.startswith("psycopg") and any(
            c.__name__ in ("OperationalError", "InterfaceError") for c in kind.__mro__
        ):
            return getattr(seen, "sqlstate", None) in _LOST_STATES
        seen = seen.__cause__
    return False


_LOST_STATES = frozenset({None, "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001"})
"""SQLSTATEs of a connection that is gone or refused (none: libpq's own report of a
broken or refused connection): admin shutdown, crash shutdown, cannot connect now
(starting up), connection exceptions."""


class StoreLink:
    """Opens the store at `url` for `command`, waiting for the server (module docstring).

    `retry_for`: seconds to keep trying before giving up with a usage error (None:
    without end). `stop`: set by the command's signal handler; every wait ends then.
    """

    def __init__(
        self,
        url: str,
        command: str,
        stop: threading.Event,
        err: IO[str],
        *,
        retry_for: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url, self.command, self.stop, self.err = url, command, stop, err
        self.retry_for, self.clock = retry_for, clock

    def say(self, text: str) -> None:
        self.err.write(f"statekit {self.command}: {text}\n")
        self.err.flush()

    def open(self, ready: Callable[[Store], T]) -> tuple[Store, T] | None:
        """The store opened and `ready(store)` (what the command builds on it: runners),
        once the server answers; None when stopped while waiting. A lost connection
        during `ready` counts as not reached yet."""
        began = self.clock()
        wait, told = WAIT_FIRST, False
        while not self.stop.is_set():
            try:
                store = open_store(self.url)
            except RunnerError as exc:
                if not connection_lost(exc):
                    raise
                failure: BaseException = exc
            else:
                try:
                    return store, ready(store)
                except Exception as exc:
                    _close_quietly(store)
                    if not connection_lost(exc):
                        raise
                    failure = exc
            if not told:
                self.say(f"{_why(failure)}; waiting for the server (SIGTERM stops it)")
                told = True
            if self.retry_for is not None and self.clock() - began >= self.retry_for:
                raise StoreWaitExpired(
                    f"the store could not be reached for {self.retry_for:g} s: {_why(failure)}; "
                    "check that the server runs and accepts connections (the URL's "
                    "?retry_for= sets how long to wait)"
                )
            self.stop.wait(wait)
            wait = min(wait * 2, WAIT_LAST)
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


class StoreWaitExpired(RunnerError):
    """The server could not be reached within the URL's `retry_for`."""


def _why(exc: BaseException) -> str:
    """The first line of what the database said (a driver's messages run over lines)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _close_quietly(store: Store) -> None:
    with suppress(Exception):  # a broken connection may refuse to close: it is gone anyway
        store.close()

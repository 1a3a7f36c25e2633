"""How long a store waits for its database, and which failures are worth waiting out.

One policy for both dialects, read from the store URL's query:

    postgresql://app@db.internal/app?connect_timeout=5&retry_for=120
    sqlite:///tasks.db?retry_for=0

- `connect_timeout` (seconds, default 10): how long one connection attempt may take
  (libpq's own parameter, given to it in whole seconds, rounded up).
- `retry_for` (seconds, default 30; 0: never wait): how long a refused or lost
  connection, or a transaction the server rolled back in a conflict, is retried
  before the caller gets `StoreUnavailableError`. Between attempts the store backs
  off exponentially (50 ms, doubling up to 2 s), never past the deadline.

Both parameters are taken out of the URL before it reaches the driver; a value that is
not a number of seconds is a `StoreURLError` naming the parameter and where it is.

What is retried (`failure_kind`): on PostgreSQL a connection that is refused or lost
(psycopg's `OperationalError` without a SQLSTATE, SQLSTATE class 08, 57P01
admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now — a server starting
or shutting down —, 53300 too_many_connections) and the conflicts the server
resolves by rolling a transaction back (40001 serialization_failure, 40P01
deadlock_detected). On SQLite nothing: the database is a file the process opens
itself, so there is no connection to lose; a locked database already waits
`busy_timeout` before `StoreBusyError`, and a disk error is a `StoreFailure`, not
something a wait repairs. SQLite URLs still take and check both parameters, so that
one URL form serves either dialect.

Retrying a transaction is safe because each one is decided again from the database:
see `statekit.runner.retrying`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from urllib.parse import unquote

from statekit.runner.errors import RunnerError, StoreURLError
from statekit.runner.store.rows import DecidedRows

CONNECT_TIMEOUT = 10.0
"""Seconds one connection attempt may take, unless the URL says `?connect_timeout=`."""
RETRY_FOR = 30.0
"""Seconds a lost or refused connection is retried, unless the URL says `?retry_for=`."""
FIRST_BACKOFF = 0.05
"""The first wait between two attempts, in seconds (doubled after each)."""
LONGEST_BACKOFF = 2.0
"""The longest wait between two attempts, in seconds."""

PARAMETERS = ("connect_timeout", "retry_for")
"""The URL query parameters this module reads (and takes out of the URL)."""

LOST = "lost"
"""`failure_kind`: the connection was refused or lost."""
CONFLICT = "conflict"
"""`failure_kind`: the server rolled the transaction back to resolve a conflict."""

_LOST_STATES = frozenset({"57P01", "57P02", "57P03", "53300"})
_CONFLICT_STATES = frozenset({"40001", "40P01"})
# what libpq says (it gives no SQLSTATE for a failed connection attempt) when a
# server is not there yet, is going away, or is full: worth waiting for
_TRANSIENT_WORDS = (
    "connection refused",
    "could not connect",
    "starting up",
    "shutting down",
    "in recovery mode",
    "not yet accepting connections",
    "not accepting connections",
    "too many clients",
    "too many connections",
    "remaining connection slots",
    "timeout expired",
    "server closed the connection",
    "terminating connection",
    "no such file or directory",  # a Unix socket not created yet
    "connection is closed",
    "connection is lost",
    "consuming input failed",
    "sending query failed",
)


@dataclass(frozen=True, slots=True)
class ConnectionPolicy:
    """How long to wait for a database (see the module docstring)."""

    connect_timeout: float = CONNECT_TIMEOUT
    retry_for: float = RETRY_FOR
    first_backoff: float = FIRST_BACKOFF
    longest_backoff: float = LONGEST_BACKOFF

    def deadline(self) -> Deadline:
        """A deadline `retry_for` from now, with this policy's backoff."""
        return Deadline(self, time.monotonic() + self.retry_for)

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (0 for the first), before the
        deadline is taken into account: exponential, bounded by `longest_backoff`."""
        return min(self.longest_backoff, self.first_backoff * 2.0 ** min(attempt, 64))

    @property
    def libpq_connect_timeout(self) -> int:
        """`connect_timeout` as libpq takes it: whole seconds, at least 1."""
        return max(1, math.ceil(self.connect_timeout))


DEFAULT_POLICY = ConnectionPolicy()
"""The policy of a URL that says nothing."""


class Deadline:
    """The attempts of one wait: `next_wait()` gives how long to sleep before the next one,
    or None when the deadline has passed (the caller then gives up)."""

    __slots__ = ("_attempt", "at", "policy")

    def __init__(self, policy: ConnectionPolicy, at: float) -> None:
        self.policy, self.at, self._attempt = policy, at, 0

    def next_wait(self) -> float | None:
        """Seconds to wait before the next attempt (never past the deadline); None when
        there is no time left for another one."""
        left = self.at - time.monotonic()
        if left <= 0:
            return None
        wait = self.policy.backoff(self._attempt)
        self._attempt += 1
        return min(wait, left)

    def wait(self) -> bool:
        """Sleep until the next attempt; False (without sleeping) when time is up."""
        wait = self.next_wait()
        if wait is None:
            return False
        time.sleep(wait)
        return True


def split_policy(url: str, display: str | None = None) -> tuple[ConnectionPolicy, str]:
    """The policy the URL's query states, and the URL without its parameters (what the
    driver is given; every other parameter is left as written). `display` is the URL as
    messages show it (without a password); a bad value is a `StoreURLError` naming the
    parameter and its position in that text."""
    shown = url if display is None else display
    base, mark, query = url.partition("?")
    if not mark:
        return DEFAULT_POLICY, url
    values: dict[str, float] = {}
    kept: list[str] = []
    for pair in query.split("&"):
        name, _, raw = pair.partition("=")
        if unquote(name) not in PARAMETERS:
            kept.append(pair)
            continue
        values[unquote(name)] = _seconds(unquote(name), unquote(raw), shown, pair)
    if not values:
        return DEFAULT_POLICY, url
    policy = ConnectionPolicy(
        connect_timeout=values.get("connect_timeout", CONNECT_TIMEOUT),
        retry_for=values.get("retry_for", RETRY_FOR),
    )
    return policy, base + ("?" + "&".join(kept) if kept else "")


def _seconds(name: str, raw: str, shown: str, pair: str) -> float:
    """A parameter's value as seconds (StoreURLError saying where it is, when it is not)."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    smallest = 0.0 if name == "retry_for" else 0.001
    if math.isfinite(value) and value >= smallest:
        return value
    at = shown.find(pair)
    where = f" (character {at + 1} of the URL)" if at >= 0 else ""
    need = "a positive number of seconds"
    if name == "retry_for":
        need = "a number of seconds, 0 or more"
    raise StoreURLError(f"{shown}: ?{name}={raw!r}{where} is not {need}, as ?{name}=30 is")


def failure_kind(exc: BaseException) -> str | None:
    """`LOST`, `CONFLICT` or None (not a failure a retry can help) for a driver's
    exception; see the module docstring. Classes are told by name, so the driver is
    not imported here."""
    state = getattr(exc, "sqlstate", None)
    if state is not None:
        if state in _CONFLICT_STATES:
            return CONFLICT
        if state in _LOST_STATES or state.startswith("08"):
            return LOST
        return None
    names = {c.__name__ for c in type(exc).__mro__}
    if "OperationalError" in names and type(exc).__module__.startswith("psycopg"):
        return LOST  # libpq failed the connection itself: it gives no SQLSTATE
    if "InterfaceError" in names and type(exc).__module__.startswith("psycopg"):
        text = str(exc).lower()
        return LOST if any(w in text for w in _TRANSIENT_WORDS) else None
    return None


def refused_for_now(exc: BaseException) -> bool:
    """Whether a failed connection attempt is worth another try (a server not there yet,
    going away or full) rather than a mistake a wait does not mend (a wrong password, a
    missing database or role)."""
    state = getattr(exc, "sqlstate", None)
    if state is not None:
        return state in _LOST_STATES or state.startswith("08")
    text = str(exc).lower()
    return any(w in text for w in _TRANSIENT_WORDS)


class TransactionInterrupted(RunnerError):
    """A write or read failed because the connection was lost or the server rolled the
    transaction back in a conflict (internal: the runner retries the transaction; a
    caller of the store alone sees it as a statekit error). `written`: what the
    interrupted transaction had given `Store.write_decided`, in order."""

    def __init__(self, message: str, written: tuple[DecidedRows, ...] = ()) -> None:
        super().__init__(message)
        self.written = written


class NotCommitted(TransactionInterrupted):
    """The transaction failed before its COMMIT was sent (or the server refused it in a
    conflict): nothing of it was committed; deciding again from the database is safe."""


class CommitUnknown(TransactionInterrupted):
    """The connection was lost while the COMMIT was on its way: the transaction may or
    may not have committed; read the database before answering."""

"""Opening a PostgreSQL connection under the store's connection policy (`connection_policy`).

An attempt the server refuses for now (not there yet, starting, in recovery, out of
connection slots) is tried again with the policy's backoff until `retry_for` has
passed, then `StoreUnavailableError`; on opening, a refusal a wait does not mend (a
wrong password, no such database or role) raises at once.
"""

from __future__ import annotations

from typing import Any

from statekit.runner.errors import NoStoreError, StoreUnavailableError, StoreURLError
from statekit.runner.store.connection_policy import ConnectionPolicy, refused_for_now


def connect(
    psycopg: Any,
    libpq_url: str,
    url: str,
    policy: ConnectionPolicy,
    *,
    read_only: bool,
    opening: bool,
) -> Any:
    """A new autocommit connection to `libpq_url` (`url`: the store's, for messages;
    `read_only`: every transaction of the session refuses writes). When `opening`, a
    failure a wait does not mend raises at once; once the store has been connected,
    every failure is waited out (the URL was right: a server in recovery says things
    libpq has no code for)."""
    deadline = policy.deadline()
    while True:
        try:
            # No server-side prepared statements: the hot statements go as client-bound
            # queries (`PostgresStore._send_query`), and preparing the others measured no
            # gain (two runners taking turns, 195 events/s either way).
            conn = psycopg.connect(
                libpq_url,
                autocommit=True,
                connect_timeout=policy.libpq_connect_timeout,
                prepare_threshold=None,
            )
            if read_only:
                try:
                    conn.execute("SET default_transaction_read_only = on")
                except BaseException:
                    conn.close()
                    raise
            return conn
        except psycopg.Error as exc:
            if opening and not refused_for_now(exc):
                raise _refused(url, exc, read_only=read_only) from exc
            if not deadline.wait():
                raise unavailable(url, policy, exc) from exc


def _refused(url: str, exc: Exception, *, read_only: bool) -> Exception:
    """The error for a connection the server refused for good."""
    # libpq gives no SQLSTATE for a failed connection: the server's words
    # (3D000, invalid_catalog_name) are all there is to tell a missing database
    if read_only and 'database "' in str(exc) and "does not exist" in str(exc):
        return NoStoreError(
            f"no statekit store at {safe_url(url)}: the database does not exist; check the URL"
        )
    return StoreURLError(f"{safe_url(url)}: cannot connect: {exc}")


def unavailable(url: str, policy: ConnectionPolicy, exc: BaseException) -> StoreUnavailableError:
    """The error once `retry_for` has passed without a working connection."""
    words = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreUnavailableError(
        f"the PostgreSQL server at {safe_url(url)} could not be reached ({words}), retried "
        f"for {policy.retry_for:g} s: check that the server is running and accepts "
        "connections there, or wait longer with ?retry_for=SECONDS in the store URL"
    )


def safe_url(url: str) -> str:
    """The URL without its password (for messages)."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    credentials, host = rest.rsplit("@", 1)
    return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"

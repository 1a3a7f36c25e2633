"""One connection to a NATS server with JetStream, behind blocking calls.

nats-py is asyncio; the dispatcher and its handlers are not. The link runs one
event loop in a thread of its own for as long as it is open, with one client
connection on it, and each blocking call (`publish`, `ensure_stream`) hands a
coroutine to that loop and waits for its result. The other way, `asyncio.run` per
batch, connects again for every batch (a client belongs to the loop it was made on).
bench/relay_throughput.py measures both: awaiting each publish alone, per batch of 32
was 16% to 39% faster in two runs (a thread hand-off per message against a connection
per batch), per message 3 to 5 times slower; `start_publish` lets a caller send many
before awaiting any, as the relay does with a round's messages. The thread is kept
because the relay needs one connection that lives as long as it does: it is what
notices a restarted server and reconnects.

The client reconnects by itself, without end, `reconnect_wait` seconds apart, when the
server goes away. While it is not connected a publish fails at once
(`BrokerUnavailableError`) instead of queueing the message in the client's buffer: the
dispatcher then counts a failed attempt and retries the message after its backoff.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, TypeVar

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js.api import PubAck, StorageType
from nats.js.client import JetStreamContext

T = TypeVar("T")

CLOSE_WITHIN = 5.0
"""Seconds `close` waits for the connection to close before stopping the loop anyway."""


class RelayError(Exception):
    """The relay cannot go on (the broker cannot be reached at start-up, the stream cannot
    be made); the message says why and what to do."""


class BrokerUnavailableError(RelayError):
    """A publish found the connection to the broker down (the client is reconnecting)."""


class PublishError(RelayError):
    """The broker did not acknowledge a message (it timed out, or no stream takes its
    subject, or JetStream refused it)."""


@dataclass(frozen=True, slots=True)
class PendingPublish:
    """A publish sent and not yet acknowledged (`NatsLink.start_publish`)."""

    subject: str
    timeout: float
    future: concurrent.futures.Future[PubAck]


class NatsLink:
    """A NATS connection on an event loop in its own thread (module docstring)."""

    def __init__(
        self, server: str, *, connect_timeout: float = 5.0, reconnect_wait: float = 1.0
    ) -> None:
        self.server = server
        self.connect_timeout = connect_timeout
        self.reconnect_wait = reconnect_wait
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Client | None = None
        self._jetstream: JetStreamContext | None = None
        self.last_error: BaseException | None = None
        """The latest error the client reported in the background (a lost connection)."""

    def open(self) -> None:
        """Start the loop and connect; `RelayError` when the server cannot be reached."""
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="statekit-relay-nats")
        self._thread.daemon = True
        self._loop = loop
        self._thread.start()
        try:
            self._client = self._call(self._connect(), timeout=self.connect_timeout + 5.0)
        except Exception as exc:
            self.close()
            cause = self.last_error if isinstance(exc, nats.errors.NoServersError) else exc
            raise RelayError(
                f"cannot reach the NATS server at {shown_server(self.server)}: "
                f"{describe(cause)}; is nats-server running there (with -js)?"
            ) from exc
        self._jetstream = self._client.jetstream()

    async def _connect(self) -> Client:
        async def remember(exc: Exception) -> None:
            self.last_error = exc

        # The first connection is tried twice, `reconnect_wait` apart, so that a wrong
        # address or a server that is not running is said at once (nats-py would otherwise
        # retry it as long as it retries a lost one); once connected, the client reconnects
        # without end. nats-py reads the option from `options` when a connection is lost
        # (tests/relay/test_relay_restarts.py restarts the server under it).
        client = await nats.connect(
            servers=[self.server],
            connect_timeout=max(1, round(self.connect_timeout)),
            reconnect_time_wait=self.reconnect_wait,
            max_reconnect_attempts=1,
            error_cb=remember,
        )
        client.options["max_reconnect_attempts"] = -1
        return client

    async def _shut(self, client: Client | None) -> None:
        """Close the client, then end every other task still on the loop."""
        if client is not None:
            with suppress(Exception):  # closing a broken connection: nothing left to do
                await asyncio.wait_for(client.close(), CLOSE_WITHIN)
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    @property
    def connected(self) -> bool:
        """Whether the client is connected now (not reconnecting, not closed)."""
        return self._client is not None and self._client.is_connected

    def ensure_stream(self, name: str, subjects: str) -> str:
        """The stream that takes `subjects`: the one the server has, else a new stream
        `name` on disk (file storage) with JetStream's default duplicate window."""
        jetstream = self._ready()

        async def find_or_add() -> str:
            try:
                return await jetstream.find_stream_name_by_subject(subjects)
            except nats.js.errors.NotFoundError:
                pass
            await jetstream.add_stream(name=name, subjects=[subjects], storage=StorageType.FILE)
            return name

        try:
            return self._call(find_or_add(), timeout=self.connect_timeout + 5.0)
        except Exception as exc:
            raise RelayError(
                f"cannot find or make a JetStream stream for {subjects} on "
                f"{shown_server(self.server)}: {describe(exc)}{stream_advice(exc, name)}"
            ) from exc

    def publish(
        self, subject: str, body: bytes, headers: dict[str, str], timeout: float
    ) -> tuple[str, int, bool]:
        """Publish and wait for JetStream's acknowledgement; the stream, its sequence
        number for the message and whether it was a duplicate it dropped."""
        return self.acknowledgement(self.start_publish(subject, body, headers, timeout))

    def start_publish(
        self, subject: str, body: bytes, headers: dict[str, str], timeout: float
    ) -> PendingPublish:
        """Send a message without waiting for its acknowledgement (`acknowledgement`
        waits): publishes started together are pipelined on the one connection."""
        jetstream = self._ready()
        if not self.connected:
            raise BrokerUnavailableError(
                f"not connected to the NATS server at {shown_server(self.server)} "
                f"(reconnecting: {describe(self.last_error)})"
            )
        assert self._loop is not None
        coroutine = jetstream.publish(subject, body, timeout=timeout, headers=dict(headers))
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return PendingPublish(subject, timeout, future)

    def acknowledgement(self, pending: PendingPublish) -> tuple[str, int, bool]:
        """Wait for the acknowledgement of a publish `start_publish` sent (`publish`)."""
        subject, timeout = pending.subject, pending.timeout
        try:
            ack = pending.future.result(timeout + 5.0)
        except nats.js.errors.NoStreamResponseError as exc:
            raise PublishError(f"no JetStream stream takes the subject {subject}") from exc
        except (nats.errors.TimeoutError, TimeoutError) as exc:
            pending.future.cancel()
            raise PublishError(
                f"no acknowledgement for {subject} within {timeout:g} s from "
                f"{shown_server(self.server)}"
            ) from exc
        except nats.errors.Error as exc:
            raise PublishError(f"publishing to {subject} failed: {describe(exc)}") from exc
        return ack.stream, ack.seq, bool(ack.duplicate)

    def close(self) -> None:
        """Close the connection and stop the loop (nothing of a publish under way is
        waited for: the dispatcher has not settled its message, which goes out again)."""
        loop, client = self._loop, self._client
        if loop is None:
            return
        with suppress(Exception):  # a loop that would not stop its tasks: stopped below anyway
            self._call(self._shut(client), timeout=2 * CLOSE_WITHIN)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(CLOSE_WITHIN)
        if not loop.is_running():
            loop.close()
        self._loop = self._thread = None
        self._client = self._jetstream = None

    def _ready(self) -> JetStreamContext:
        if self._jetstream is None:
            raise RelayError("the relay is not open: use it in a `with` block or call open()")
        return self._jetstream

    def _call(self, coroutine: Coroutine[Any, Any, T], *, timeout: float) -> T:
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise


STREAM_NAME_IN_USE = 10058
"""JetStream's error code for a stream name taken by a stream of other subjects."""


def stream_advice(exc: BaseException, name: str) -> str:
    """What to do about `exc`, JetStream's answer when asked for a stream (else "")."""
    if isinstance(exc, nats.js.errors.ServiceUnavailableError):
        return (
            "; JetStream is not enabled on that server (or not ready): start nats-server with -js"
        )
    if getattr(exc, "err_code", None) == STREAM_NAME_IN_USE:
        return (
            f"; a stream named {name} already exists there for other subjects (another "
            "relay's prefix): give this relay a stream of its own with --stream NAME"
        )
    return ""


def shown_server(server: str) -> str:
    """`server` without its password, for messages."""
    scheme, _, rest = server.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not at:
        return server
    return f"{scheme}://{userinfo.partition(':')[0]}@{host}"


def describe(exc: BaseException | None) -> str:
    """An error in words (a nats-py error's text is often empty: its class says it)."""
    if exc is None:
        return "no error reported"
    text = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {text}" if text and text != name else name

"""A minimal Language Server Protocol client over stdio, for driving an editor's server in tests.

JSON-RPC messages framed by `Content-Length` headers. A reader thread puts every
message the server sends on a queue; `request` waits for its response and
answers the server's own requests on the way (configuration, capability
registration), so the server never waits on us. Every wait has a harness
timeout: a hung or crashed server fails the test with what it printed instead
of hanging the suite.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any

from node_tools import HARNESS_TIMEOUT_S

Message = dict[str, Any]


class ServerFailed(AssertionError):
    """The server exited, hung or answered with an error."""


class LanguageServer:
    """One server process spoken to over its stdin and stdout."""

    def __init__(
        self,
        command: Sequence[str],
        configuration: Callable[[str], object] = lambda _: None,
        timeout_s: float = HARNESS_TIMEOUT_S,
    ) -> None:
        self._process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._configuration = configuration
        self._timeout_s = timeout_s
        self._messages: queue.Queue[Message | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self._next_id = 0
        self.notifications: list[Message] = []
        self.stray: list[Message] = []
        assert self._process.stdout is not None and self._process.stderr is not None
        threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self._process.stderr,), daemon=True).start()

    @property
    def pid(self) -> int:
        """The server's process id (to read its memory, say)."""
        return self._process.pid

    # --- speaking -----------------------------------------------------------------

    def request(self, method: str, params: object) -> Any:
        """Send a request and return its result (server requests met meanwhile are answered)."""
        self._next_id += 1
        ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self._receive(f"the answer to {method}")
            if "method" in message and "id" in message:
                self._answer(message)
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == ident:
                if "error" in message:
                    raise ServerFailed(f"{method} failed: {message['error']}")
                return message.get("result")
            else:
                self.stray.append(message)

    def notification(self, method: str, matches: Callable[[Any], bool]) -> Any:
        """The params of the first notification `method` whose params match (waits for it)."""
        while True:
            for message in self.notifications:
                if message["method"] == method and matches(message.get("params")):
                    return message.get("params")
            message = self._receive(f"a {method} notification")
            if "method" in message and "id" in message:
                self._answer(message)
            elif "method" in message:
                self.notifications.append(message)

    def take_notification(self, method: str, matches: Callable[[Any], bool]) -> Any:
        """Like `notification`, but the notification is consumed: the next call waits for a
        newer one (a server that publishes twice per version, say)."""
        params = self.notification(method, matches)
        for index, message in enumerate(self.notifications):
            if message["method"] == method and message.get("params") is params:
                del self.notifications[index]
                break
        return params

    def send_bytes(self, data: bytes) -> None:
        """Write `data` to the server as it is (a malformed frame, say)."""
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except OSError as error:
            raise ServerFailed(f"the server stopped reading: {error}{self._said()}") from error

    def next_id(self) -> int:
        """A request id not used yet."""
        self._next_id += 1
        return self._next_id

    def response(self, ident: object) -> Message:
        """The whole response (result or error) to request `ident`; responses to other ids
        met meanwhile are kept in `stray`."""
        while True:
            message = self._receive(f"the response to request {ident!r}")
            if "method" in message and "id" in message:
                self._answer(message)
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == ident:
                return message
            else:
                self.stray.append(message)

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self._process.poll() is None

    def notify(self, method: str, params: object) -> None:
        """Send a notification (no answer expected)."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self) -> None:
        """Ask the server to shut down, then make sure the process is gone."""
        try:
            if self._process.poll() is None:
                self.request("shutdown", None)
                self.notify("exit", None)
                self._process.wait(timeout=self._timeout_s)
        except (ServerFailed, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self._process.poll() is None:
                self._process.kill()
                self._process.wait()
            for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
                if stream is not None:
                    stream.close()

    def _answer(self, message: Message) -> None:
        result: object = None
        if message["method"] == "workspace/configuration":
            items = message.get("params", {}).get("items", [])
            result = [self._configuration(str(item.get("section", ""))) for item in items]
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _send(self, message: Message) -> None:
        body = json.dumps(message).encode("utf-8")
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
            stdin.flush()
        except OSError as error:
            raise ServerFailed(f"the server stopped reading: {error}{self._said()}") from error

    def _receive(self, waiting_for: str) -> Message:
        try:
            message = self._messages.get(timeout=self._timeout_s)
        except queue.Empty:
            raise ServerFailed(
                f"no message in {self._timeout_s:.0f} s waiting for {waiting_for}{self._said()}"
            ) from None
        if message is None:
            raise ServerFailed(f"the server exited waiting for {waiting_for}{self._said()}")
        return message

    def _said(self) -> str:
        text = b"".join(self._stderr).decode("utf-8", "replace").strip()
        return f"; it printed:\n{text}" if text else ""

    # --- listening (reader threads) -----------------------------------------------

    def _read(self, stdout: IO[bytes]) -> None:
        try:
            while True:
                length = None
                while True:
                    line = stdout.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if length is None:
                    return
                self._messages.put(json.loads(stdout.read(length)))
        except (OSError, ValueError):
            return
        finally:
            self._messages.put(None)

    def _drain(self, stderr: IO[bytes]) -> None:
        try:
            for line in stderr:
                self._stderr.append(line)
        except (OSError, ValueError):
            return

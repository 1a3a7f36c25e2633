"""A throwaway NATS server with JetStream on loopback, for tests, docs samples and benchmarks.

    with ThrowawayNats() as broker:
        relay = Relay(store, broker.url)         # nats://127.0.0.1:<port>

`nats-server -js` on a free port bound to 127.0.0.1, its JetStream file store in a
temporary directory; `halt()` and `resume()` stop and start it on the same port and
files (a broker restarted under a client), `stop()` kills it and removes the files.
Raises `NatsUnavailable` with what to do when `nats-server` is not installed.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from statekit.testing.postgres_server import free_port

READY_WITHIN = 30.0
"""Seconds a started server has to accept connections (it takes about 0.2 s here)."""


class NatsUnavailable(RuntimeError):
    """`nats-server` is not installed, or it would not start."""


class ThrowawayNats:
    """A NATS server with JetStream for the length of a `with` block (module docstring)."""

    def __init__(self, *, jetstream: bool = True) -> None:
        self.jetstream = jetstream  # False: a plain NATS server (what a relay must refuse)
        program = shutil.which("nats-server")
        if program is None:
            raise NatsUnavailable(
                "nats-server is not installed: apt-get install -y nats-server (make test does)"
            )
        self.program = program
        self.port = 0
        self.store_dir = Path()
        self.url = ""
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ThrowawayNats:
        """Make the store directory, pick a port and start; sets `url`."""
        self.store_dir = Path(tempfile.mkdtemp(prefix="statekit-nats-"))
        self.port = free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.resume()
        return self

    def resume(self) -> None:
        """Start the server (again, after `halt`) on its port and store directory; return
        once it accepts connections."""
        if self.process is not None:
            raise NatsUnavailable("the server is already running")
        log = (self.store_dir / "server.log").open("ab")
        command = [self.program, "-a", "127.0.0.1", "-p", str(self.port)]
        if self.jetstream:
            command += ["-js", "-sd", str(self.store_dir / "jetstream")]
        self.process = subprocess.Popen(command, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + READY_WITHIN
        while not _accepts(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.halt()
                text = (self.store_dir / "server.log").read_text(errors="replace")
                raise NatsUnavailable(f"nats-server did not start: {text[-2000:]}")
            time.sleep(0.01)

    def halt(self) -> None:
        """Stop the server at once (SIGKILL: nothing flushed on the way out), keeping its
        files and port."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        self.process = None

    def stop(self) -> None:
        """Stop the server and remove its files."""
        self.halt()
        if self.store_dir != Path() and self.store_dir.exists():
            shutil.rmtree(self.store_dir, ignore_errors=True)

    def __enter__(self) -> ThrowawayNats:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0

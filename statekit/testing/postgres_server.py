"""A throwaway PostgreSQL server on loopback, for tests and benchmarks only.

    with ThrowawayPostgres() as server:
        store = open_store(server.url)          # postgresql://postgres@127.0.0.1:<port>/postgres
        other = server.create_database("t1")    # a fresh database's URL

`initdb` into a temporary directory, `pg_ctl start` on a free port bound to
127.0.0.1 (its socket in the data directory), `pg_ctl stop -m immediate` and
removal on exit. `halt(mode)`, `resume()` and `restart(mode)` stop and start it on
the same port and files, for tests of clients that outlive a restart. As root the
server runs as the `postgres` user (initdb refuses root).
Raises `PostgresUnavailable` with what to do when PostgreSQL is not installed.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server programs are not installed (or the server would not start)."""


def find_bindir() -> Path | None:
    """The directory holding `initdb` and `pg_ctl` (newest Debian version first)."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return Path(candidate)
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayPostgres:
    """A PostgreSQL server for the length of a `with` block (see the module docstring).

    `settings` are extra `-c name=value` server settings.
    """

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        bindir = find_bindir()
        if bindir is None:
            raise PostgresUnavailable(
                "PostgreSQL is not installed (no initdb): run scripts/ensure-postgres.sh "
                "or apt-get install -y postgresql"
            )
        self.bindir = bindir
        self.settings = {"listen_addresses": "127.0.0.1", "max_connections": "200"}
        self.settings.update(settings or {})
        self.port = 0
        self.data = Path()
        self.url = ""

    def _run(self, *args: str) -> None:
        command = [str(a) for a in args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise PostgresUnavailable(
                f"{' '.join(command)} failed ({done.returncode}): {done.stderr or done.stdout}"
            )

    def start(self) -> ThrowawayPostgres:
        """initdb and start; sets `url`."""
        self.data = Path(tempfile.mkdtemp(prefix="statekit-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        initdb = [str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust"]
        self._run(*initdb, "-U", "postgres", "--no-locale", "-E", "UTF8")
        self.port = free_port()
        self.resume()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        return self

    def halt(self, mode: str = "fast") -> None:
        """Stop the server, keeping its files and port, as an operator's `pg_ctl stop -m
        MODE` does (`fast`: clients are disconnected and the server shuts down cleanly;
        `immediate`: it quits at once and recovers from its WAL when started again)."""
        if mode not in ("smart", "fast", "immediate"):
            raise ValueError(f"unknown shutdown mode {mode!r}")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def resume(self) -> None:
        """Start the server (again, after `halt`) on its port; return once it accepts
        connections."""
        settings = [f"-c {k}={v}" for k, v in self.settings.items()]
        options = " ".join([f"-p {self.port}", f"-k {self.data}", *settings])
        pg_ctl = [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.data / "log")]
        self._run(*pg_ctl, "-w", "-t", "60", "-o", options, "start")

    def restart(self, mode: str = "fast") -> None:
        """`halt(mode)` then `resume()`: a restart as an operator makes one."""
        self.halt(mode)
        self.resume()

    def create_database(self, name: str) -> str:
        """Create an empty database; return its URL."""
        import psycopg  # the optional dependency, only where a server is used

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        """Stop the server and remove its files (`immediate`: nothing is flushed or
        checkpointed on the way out, the files are removed right after)."""
        if self.url:
            try:
                self._run(
                    str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"
                )
            except (PostgresUnavailable, subprocess.TimeoutExpired):
                pid_file = self.data / "postmaster.pid"
                if pid_file.exists():
                    os.kill(int(pid_file.read_text().split()[0]), 9)
            self.url = ""
        if self.data != Path() and self.data.exists():
            shutil.rmtree(self.data, ignore_errors=True)

    def __enter__(self) -> ThrowawayPostgres:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        *rest: Any,
    ) -> None:
        self.stop()

"""How long a throwaway broker takes to start: nats-server with JetStream against RabbitMQ.

Run: `python -m bench.broker_startup` from the repository root. Each server is
started RUNS (5) times in a fresh temporary folder on free loopback ports, and timed
from the start of its process until its client port accepts a TCP connection (both
open it last, once ready); the runs of the two alternate. RabbitMQ runs as its own
Erlang node (its own node name, cookie, port mapper port and data folder), killed with
its process group and its port mapper afterwards; it is measured only when
RabbitMQ is installed (Debian: `apt-get install rabbitmq-server`). This is
what docs/relay.md cites for the choice of NATS JetStream: a test suite starts a
broker per module and restarts it inside tests.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from contextlib import suppress
from pathlib import Path

from statekit.testing.nats_server import ThrowawayNats
from statekit.testing.postgres_server import free_port

RUNS = 5
WITHIN = 120.0
RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
EPMD = shutil.which("epmd") or "/usr/lib/erlang/bin/epmd"
"""Debian's server script itself (/usr/sbin/rabbitmq-server switches to the rabbitmq user
through `su`, which drops the environment that makes the node a throwaway one)."""


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def nats_start() -> float:
    """Seconds from starting nats-server -js until it accepts connections."""
    broker = ThrowawayNats()
    start = time.perf_counter()
    broker.start()
    elapsed = time.perf_counter() - start
    broker.stop()
    return elapsed


def rabbitmq_start(program: str) -> float:
    """Seconds from starting a throwaway RabbitMQ node until its AMQP port accepts."""
    folder = Path(tempfile.mkdtemp(prefix="statekit-rabbit-"))
    port, dist, epmd = free_port(), free_port(), free_port()
    (folder / "enabled_plugins").write_text("[].\n")
    env = dict(
        os.environ,
        HOME=str(folder),
        RABBITMQ_NODENAME=f"bench{port}@localhost",
        RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
        RABBITMQ_NODE_PORT=str(port),
        RABBITMQ_DIST_PORT=str(dist),
        ERL_EPMD_PORT=str(epmd),
        RABBITMQ_MNESIA_BASE=str(folder / "mnesia"),
        RABBITMQ_LOG_BASE=str(folder / "log"),
        RABBITMQ_ENABLED_PLUGINS_FILE=str(folder / "enabled_plugins"),
        RABBITMQ_CONFIG_FILE=str(folder / "rabbitmq"),
        RABBITMQ_PID_FILE=str(folder / "pid"),
    )
    # the port mapper, a child of this process (the node would start one as a daemon)
    mapper = subprocess.Popen([EPMD, "-port", str(epmd)], stderr=subprocess.DEVNULL)
    start = time.perf_counter()
    with (folder / "out").open("wb") as out:
        child = subprocess.Popen([program], env=env, stdout=out, stderr=out, start_new_session=True)
    try:
        while not _accepts(port):
            if child.poll() is not None or time.perf_counter() - start > WITHIN:
                text = (folder / "out").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"rabbitmq-server did not start: {text}")
            time.sleep(0.01)
        return time.perf_counter() - start
    finally:
        with suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        mapper.kill()
        mapper.wait()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    rabbit = RABBITMQ_SERVER if os.access(RABBITMQ_SERVER, os.X_OK) else None
    nats_times: list[float] = []
    rabbit_times: list[float] = []
    for _ in range(RUNS):
        nats_times.append(nats_start())
        if rabbit:
            rabbit_times.append(rabbitmq_start(rabbit))
    print(f"| broker | start-up, median of {RUNS} (range) |\n|---|---|")
    for name, times in (("nats-server -js", nats_times), ("rabbitmq-server", rabbit_times)):
        if not times:
            print(f"| {name} | not installed |")
            continue
        median = statistics.median(times)
        print(f"| {name} | {median:.2f} s ({min(times):.2f} to {max(times):.2f}) |")


if __name__ == "__main__":
    main()

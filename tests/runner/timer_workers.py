"""Timer worker processes for the crash and concurrency tests (run as a script).

python timer_workers.py URL CHART CLOCK_FILE BATCH
    → "ready"; after a line on standard input, one JSON line per delivery, written once
      its transaction committed: [instance, event_id, status, version]; exits when
      nothing is due.

BATCH is `fire_due`'s limit per call (each call commits). The runner's clock is
injected: each reading is the integer in CLOCK_FILE, which the test moves forward
between runs. `deliver` is the same loop for a forked child writing to a pipe (the
crash test forks its hundred workers rather than starting an interpreter each).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store


def main(url: str, chart: str, clock_file: str, batch: str) -> None:
    clock = Path(clock_file)
    runner = Runner(statekit.load(chart), open_store(url), clock=lambda: int(clock.read_text()))
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    sys.stdin.readline()  # all workers of a test start at once
    deliver(runner, out, batch)


def forked(url: str, chart: str, clock_file: str, batch: str, fd: int) -> None:
    """The worker in a forked child, its lines written to the pipe `fd` (its own store
    connection: nothing of the parent's is used)."""
    clock = Path(clock_file)
    runner = Runner(statekit.load(chart), open_store(url), clock=lambda: int(clock.read_text()))
    with os.fdopen(fd, "w") as out:
        deliver(runner, out, batch)


def deliver(runner: Runner, out: IO[str], batch: str) -> None:
    """Deliver due timers `batch` per transaction, each acknowledged once committed."""
    while True:
        fired = runner.fire_due(limit=int(batch))
        for o in fired:
            out.write(json.dumps([o.instance_id, o.event_id, o.status.value, o.version]) + "\n")
        out.flush()
        if not fired:
            break
    if runner.timer_problems:
        raise SystemExit(f"skipped: {runner.timer_problems}")


if __name__ == "__main__":
    main(*sys.argv[1:])

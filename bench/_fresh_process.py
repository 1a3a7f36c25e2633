"""Wall time, CPU time and peak memory of a command run as a fresh process.

The peak resident memory a parent reads from `wait4` for its child is not the
child's own: Linux carries a process's high-water mark across `exec`, and a
child made by `fork` or `vfork` starts from its parent's (so a 180 MB bench
process saw 180 MB for `python -c pass`). `run_fresh` therefore starts a small
launcher (a Python that imports nothing else) which forks the command from
itself and reports what `wait4` says of that grandchild: its peak includes the
launcher's few megabytes at most, never the bench's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_LAUNCHER = """
import os, sys
null = os.open(os.devnull, os.O_RDWR)
pid = os.fork()
if pid == 0:
    os.dup2(null, 0); os.dup2(null, 1); os.dup2(null, 2)
    os.execvpe(sys.argv[1], sys.argv[1:], os.environ)
_pid, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))
"""


def run_fresh(
    args: Sequence[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, int, int]:
    """(wall s, CPU s, peak RSS bytes, exit code) of `args` run once as a fresh process
    (see the module docstring); the wall time includes the launcher's start (~10 ms)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCHER, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    cpu, peak, code = done.stdout.split()
    return wall, float(cpu), int(peak), int(code)


def environment(**extra: str) -> dict[str, str]:
    """This process's environment with `extra` set."""
    return {**os.environ, **extra}

"""Whole-process time of `statekit lint machines/`, next to `yamllint machines/` in the same run.

Run: `python -m bench.lint_machines [RUNS]`. The commands run as fresh processes,
interleaved (one of each in turn, RUNS rounds, 21 by default), so that a change of
the machine's load hits all of them alike; each line gives the median and the
range, and the ratio of the medians to yamllint's (the limit: a linter that
reads the same YAML files and checks far less). `python -c pass` and
`import statekit` show the interpreter's own start-up. CPU time (user + system)
is given too: it is what the load of other processes inflates least.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def process_times(args: list[str]) -> tuple[float, float]:
    """(wall, CPU: user + system) seconds of running `args` once as a fresh process."""
    start = time.perf_counter()
    out = subprocess.DEVNULL
    process = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=out)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def process_seconds(args: list[str]) -> float:
    """Wall time of running `args` once as a fresh process."""
    return process_times(args)[0]


def median_process_ms(args: list[str], runs: int = 15) -> float:
    """Median wall time of running `args` as a fresh process (ms)."""
    return statistics.median(process_seconds(args) for _ in range(runs)) * 1000


def interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[tuple[float, float]]]:
    """Each command's (wall, CPU) times in ms, the commands taking turns for `runs` rounds."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            wall, cpu = process_times(args)
            times[name].append((wall * 1000, cpu * 1000))
    return times


def main() -> None:
    """Print median and range of each command, and each median's ratio to yamllint's."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    py = sys.executable
    yamllint = shutil.which("yamllint", path=str(Path(py).parent)) or shutil.which("yamllint")
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import statekit'": [py, "-c", "import statekit"],
        "statekit lint machines/": [py, "-m", "statekit.cli", "lint", "machines/"],
    }
    if yamllint is not None:
        commands["yamllint machines/"] = [yamllint, "machines/"]
    times = interleaved(commands, runs)
    print(f"{runs} interleaved runs each; median (min-max) of whole-process wall and CPU time")
    for column, label in ((0, "wall"), (1, "CPU")):
        mine = times.get("yamllint machines/")
        limit = statistics.median(t[column] for t in mine) if mine else None
        for name, found in times.items():
            values = [t[column] for t in found]
            median = statistics.median(values)
            ratio = f"  {median / limit:.2f}x yamllint" if limit else ""
            spread = f"({min(values):.1f}-{max(values):.1f})"
            print(f"{label:4} {name:28} {median:7.1f} ms {spread}{ratio}")
    if limit is None:
        print("yamllint is not installed (it is in the `bench` extra)")


if __name__ == "__main__":
    main()

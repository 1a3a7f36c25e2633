"""Whole-process time of `statekit lint machines/` and of `import statekit`.

Run: `python bench/lint_machines.py`. Each figure is the median of 15 fresh
interpreter processes (interpreter start included), next to a bare `python -c pass`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_process_ms(args: list[str], runs: int = 15) -> float:
    """Median wall time of running `args` as a fresh process."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    """Print the three medians."""
    py = sys.executable
    bare = median_process_ms([py, "-c", "pass"])
    imp = median_process_ms([py, "-c", "import statekit"])
    lint = median_process_ms([py, "-m", "statekit.cli", "lint", "machines/"])
    print(f"python -c pass              {bare:7.1f} ms")
    print(f"python -c 'import statekit'  {imp:7.1f} ms  (import alone: {imp - bare:.1f} ms)")
    print(f"statekit lint machines/     {lint:7.1f} ms  (whole process)")


if __name__ == "__main__":
    main()

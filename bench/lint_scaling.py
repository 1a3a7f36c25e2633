"""`statekit lint` on generated chains of 100 to 5,000 states, as whole processes.

Run: `python -m bench.lint_scaling [RUNS]`. For each size the chart is
`flat_chart_yaml(n, 2)` (bench/generate.py: groups of ten states, two transitions
each, every other one guarded and assigning; clean but for `unused-event`
warnings once `undefined-pair` is ignored, as here). The sizes take turns, RUNS
rounds (3 by default); each line gives the median and range of the wall time,
of the CPU time (user + system: what the load of other processes does not
inflate) and of the peak resident memory, then the CPU time a linear growth
from 100 states would give (the limit: the 100-state median x n / 100).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Row, Spread, record
from bench.generate import flat_chart_yaml

ROOT = Path(__file__).resolve().parent.parent
SIZES = (100, 500, 1000, 2000, 5000)


def run_once(path: Path) -> tuple[float, float, int, int]:
    """(wall s, CPU s, peak RSS bytes, exit code) of one `statekit lint` process."""
    args = [sys.executable, "-m", "statekit.cli", "lint", str(path), "--ignore", "undefined-pair"]
    start = time.perf_counter()
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, status >> 8


def main() -> None:
    """Print the table (see the module docstring)."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for n in SIZES:
            paths[n] = Path(folder) / f"chain{n}.yaml"
            paths[n].write_text(flat_chart_yaml(n, 2), encoding="utf-8")
        found: dict[int, list[tuple[float, float, int, int]]] = {n: [] for n in SIZES}
        for _ in range(runs):
            for n in SIZES:
                found[n].append(run_once(paths[n]))
        print(f"{runs} interleaved runs per size; median (min-max)")
        heads = f"{'wall s':>18} {'CPU s':>18} {'peak MB':>16} {'linear':>7}"
        print(f"{'states':>6} {'bytes':>8} {heads}")
        base = statistics.median(cpu for _w, cpu, _m, _c in found[SIZES[0]])
        rows: list[Row] = []
        for n in SIZES:
            walls = [w for w, _c, _m, _x in found[n]]
            cpus = [c for _w, c, _m, _x in found[n]]
            peaks = [m / 1e6 for _w, _c, m, _x in found[n]]
            codes = {x for _w, _c, _m, x in found[n]}
            size = paths[n].stat().st_size

            def cell(xs: list[float]) -> str:
                return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"

            print(
                f"{n:>6} {size:>8} {cell(walls):>18} {cell(cpus):>18}"
                f" {statistics.median(peaks):>6.0f} ({min(peaks):.0f}-{max(peaks):.0f})"
                f" {base * n / SIZES[0]:>7.2f}  exit {sorted(codes)}"
            )
            cpu, peak = Spread.of(cpus), Spread.of(peaks)
            largest = n == SIZES[-1]
            rows.append(
                Row(
                    what=f"`statekit lint` of `flat_chart_yaml({n}, 2)`, `--ignore"
                    f" undefined-pair` (exit {', '.join(str(c) for c in sorted(codes))})",
                    statekit=f"CPU {cpu.text('s')}; wall {Spread.of(walls).text('s')};"
                    f" peak {peak.text('MB')}",
                    limit=f"linear from {SIZES[0]} states: {base * n / SIZES[0]:.2f} s",
                    ratio=f"{cpu.median / (base * n / SIZES[0]):.2f} of linear",
                    aim="under 10 s CPU and 500 MB" if largest else "",
                    met=cpu.median < 10 and peak.median < 500 if largest else None,
                    headline=largest,
                )
            )
    record("lint_scaling", rows)


if __name__ == "__main__":
    main()

"""Whole-process time of `statekit explain` on each chart of `machines/`, text and JSON,
next to the same command from another checkout in the same run.

Run: `python -m bench.explain_machines [RUNS] [--against DIR]`. `--against DIR`
runs `statekit explain` from the `statekit/` package in DIR (say, the code
before a change, unpacked with `git archive REV statekit | tar -x -C DIR`);
the commands run as fresh processes, interleaved (one of each in turn, RUNS
rounds, 11 by default), so that a change of the machine's load hits all of
them alike. Each line gives the median and the range of the wall time (and of
the CPU time, user + system, which the load of other processes inflates least),
and the ratio of its median to the `--against` command's: the payloads `explain`
prints (`statekit.analysis.explain_payloads`) must keep it within 1.5x.
"""

from __future__ import annotations

import compileall
import statistics
import sys
from pathlib import Path

from bench.lint_machines import interleaved, split_against

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    """Print median and range per chart and format, and the ratio to `--against`."""
    args = sys.argv[1:]
    against, args = split_against(args)
    runs = int(args[0]) if args else 11
    py = sys.executable
    for package in [ROOT / "statekit", *([against / "statekit"] if against else [])]:
        compileall.compile_dir(package, quiet=1, force=False)
    commands: dict[str, list[str]] = {}
    for chart in sorted((ROOT / "machines").glob("*.yaml")):
        for fmt in ("text", "json"):
            explain = ["-m", "statekit.cli", "explain", "--format", fmt, str(chart)]
            commands[f"{chart.stem} {fmt}"] = [py, "-P", *explain]
            if against is not None:
                commands[f"{chart.stem} {fmt} (against)"] = [
                    f"PYTHONPATH={against}",
                    py,
                    "-P",
                    *explain,
                ]
    times = interleaved(commands, runs)
    print(f"{runs} interleaved runs each; median (min-max) of whole-process wall and CPU time")
    for column, label in ((0, "wall"), (1, "CPU")):
        for name, found in times.items():
            if name.endswith("(against)"):
                continue
            values = [t[column] for t in found]
            median = statistics.median(values)
            line = f"{label:4} {name:18} {median:7.1f} ms ({min(values):.1f}-{max(values):.1f})"
            base = times.get(f"{name} (against)")
            if base is not None:
                before = [t[column] for t in base]
                was = statistics.median(before)
                line += f"  against {was:7.1f} ms ({min(before):.1f}-{max(before):.1f})"
                line += f"  {median / was:.2f}x"
            print(line)


if __name__ == "__main__":
    main()

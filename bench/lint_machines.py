"""Whole-process time of `statekit lint machines/`, next to `yamllint machines/` in the same run.

Run: `python -m bench.lint_machines [RUNS] [--against DIR]`. The commands run as
fresh processes, interleaved (one of each in turn, RUNS rounds, 21 by default),
so that a change of the machine's load hits all of them alike; each line gives
the median and the range, and the ratio of the medians to yamllint's (the limit:
a linter that reads the same YAML files and checks far less). `python -c pass`
and `import statekit` show the interpreter's own start-up. CPU time (user +
system) is given too: it is what the load of other processes inflates least.

statekit's bytecode is compiled first, as installing a wheel does (yamllint's
was compiled when it was installed): with `PYTHONDONTWRITEBYTECODE` set and no
`__pycache__`, an editable checkout would compile every module on every run, and
that, not statekit, would be timed. `--against DIR` adds `statekit lint` run
from another checkout's `statekit/` package in DIR (say, the code before a
change, unpacked with `git archive REV statekit | tar -x -C DIR`), compiled the
same way.
"""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import TIMES, Row, Spread, record

ROOT = Path(__file__).resolve().parent.parent


def process_times(args: list[str]) -> tuple[float, float]:
    """(wall, CPU: user + system) seconds of running `args` once as a fresh process
    (leading `NAME=value` words are set in its environment, as a shell would)."""
    env = dict(os.environ)
    while args and "=" in args[0] and not args[0].startswith("/"):
        name, value = args[0].split("=", 1)
        env[name] = value
        args = args[1:]
    start = time.perf_counter()
    out = subprocess.DEVNULL
    process = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=out, env=env)
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


def split_against(args: list[str]) -> tuple[Path | None, list[str]]:
    """`--against DIR` taken out of the command line's `args`: DIR resolved (None when not
    given) and the other arguments (the benches that compare two checkouts share it)."""
    if "--against" not in args:
        return None, args
    at = args.index("--against")
    return Path(args[at + 1]).resolve(), args[:at] + args[at + 2 :]


def main() -> None:
    """Print median and range of each command, and each median's ratio to yamllint's."""
    args = sys.argv[1:]
    against, args = split_against(args)
    runs = int(args[0]) if args else 21
    py = sys.executable
    yamllint = shutil.which("yamllint", path=str(Path(py).parent)) or shutil.which("yamllint")
    # -P: the package comes from the installation (or PYTHONPATH), never the current folder
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import statekit'": [py, "-P", "-c", "import statekit"],
        "statekit lint machines/": [py, "-P", "-m", "statekit.cli", "lint", "machines/"],
    }
    for package in [ROOT / "statekit", *([against / "statekit"] if against else [])]:
        compileall.compile_dir(package, quiet=1, force=False)
    if against is not None:
        commands["... from --against"] = [
            f"PYTHONPATH={against}",
            py,
            "-P",
            "-m",
            "statekit.cli",
            "lint",
            "machines/",
        ]
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
    record("lint_machines", lint_rows(times))


def lint_rows(times: dict[str, list[tuple[float, float]]]) -> list[Row]:
    """Each command's CPU and wall time; `statekit lint machines/` against yamllint's."""
    yamllint = times.get("yamllint machines/")
    rows = []
    for name, found in times.items():
        cpu = Spread.of([t[1] for t in found])
        wall = Spread.of([t[0] for t in found])
        limit = ratio = aim = ""
        met = None
        if yamllint is not None and name != "yamllint machines/":
            theirs = statistics.median(t[1] for t in yamllint)
            ratio = f"{cpu.median / theirs:.2f}{TIMES} its CPU time"
            limit = f"`yamllint machines/`: CPU {Spread.of([t[1] for t in yamllint]).text('ms')}"
            if name == "statekit lint machines/":
                aim, met = f"at most 1.2{TIMES}", cpu.median / theirs <= 1.2
        rows.append(
            Row(
                what=f"`{name}` as a process",
                statekit=f"CPU {cpu.text('ms')}; wall {wall.text('ms')}",
                limit=limit,
                ratio=ratio,
                aim=aim,
                met=met,
                headline=name == "statekit lint machines/",
            )
        )
    return rows


if __name__ == "__main__":
    main()

"""Instructions per cached `Runner.apply`, counted by valgrind's callgrind: the figure to
compare two revisions by on a shared machine, where the wall clock swings by a third
from run to run and the instruction count does not move.

Run: `python -m bench.instructions [--before REV]` from the repository root (needs
`valgrind`: `apt-get install valgrind`). For each stream, a process applies N events
to one instance on SQLite without fsync, once with N = 1,000 and once with N = 3,000;
the difference of the two processes' totals over 2,000 is what one more apply costs,
start-up, compiling and the first read left out. Streams: `counter`, the chart of
`runner_throughput` (every event assigns and emits), and `plain` and `timed`, the
charts of `timer_throughput` (the timed one cancels and arms a timer on every event).
`--before REV` counts the `statekit` of git revision REV the same way, next to this
tree's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.runner_throughput import ROOT, export

STREAMS = {
    "counter": "bench._runner_loops:COUNTER",
    "plain": "bench.timer_throughput:PLAIN",
    "timed": "bench.timer_throughput:TIMED",
}
SMALL, LARGE = 1_000, 3_000
# Both processes of a pair must do the same start-up work: neither writes bytecode (the
# first would compile what the second then reads) and string hashing is seeded alike.
ENVIRONMENT = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
APPLY = """
import importlib, sys, tempfile
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
module, name = sys.argv[1].split(":")
text = getattr(importlib.import_module(module), name)
chart = Chart(compile_source(text, "bench.yaml").chart)
folder = tempfile.mkdtemp()
runner = Runner(chart, open_store(f"sqlite:///{folder}/i.db?synchronous=OFF"),
                clock=lambda: 1_700_000_000_000)
runner.create("i")
for n in range(int(sys.argv[2])):
    assert runner.apply("i", f"e{n}", "Incr", {"by": 1}).applied
"""


def total(tree: Path, stream: str, events: int, folder: Path) -> int:
    """Instructions of one process applying `events` events of `stream` on `tree`'s code."""
    out = folder / f"callgrind.{stream}.{events}"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
         "-c", APPLY, STREAMS[stream], str(events)],
        env=ENVIRONMENT | {"PYTHONPATH": f"{tree}{os.pathsep}{ROOT}"}, cwd=tree, check=True,
        capture_output=True,
    )  # fmt: skip
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"{out}: callgrind wrote no total")


def per_apply(tree: Path, stream: str, folder: Path) -> float:
    """Instructions one more cached apply of `stream` costs on `tree`'s code."""
    small = total(tree, stream, SMALL, folder)
    large = total(tree, stream, LARGE, folder)
    return (large - small) / (LARGE - SMALL)


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("bench.instructions needs valgrind (apt-get install valgrind)")
    args = sys.argv[1:]
    before = args[args.index("--before") + 1] if "--before" in args else None
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        trees = {"this tree": ROOT}
        if before:
            trees[before] = export(before, folder / "before")
        print(f"| stream | {' | '.join(trees)} |" + (" change |" if before else ""))
        print("|---|" + "---|" * (len(trees) + (1 if before else 0)))
        for stream in STREAMS:
            counts = [per_apply(tree, stream, folder) for tree in trees.values()]
            cells = " | ".join(f"{c / 1000:,.1f} k" for c in counts)
            change = f" {100 * (counts[0] / counts[1] - 1):+.1f}% |" if before else ""
            print(f"| {stream} | {cells} |{change}", flush=True)


if __name__ == "__main__":
    main()

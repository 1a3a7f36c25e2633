"""Instructions per compile check of bench/lsp_latency.py's 500-state chart, counted by
valgrind's callgrind: what the language server runs on every edit before it publishes
the compile diagnostics (`statekit.lsp.stages.check_stage`), and the YAML load alone,
compared between revisions on a shared machine, where CPU time swings by a fifth from
run to run and the instruction count does not move.

Run: `python -m bench.compile_instructions [--before REV] [--only check|load]` from the
repository root (needs `valgrind`; under valgrind each process takes minutes). As in
`bench.instructions`, each figure is the difference between a process doing the work 3
times and one doing it once, over 2: start-up and the first compile (imports, the
schema's first use) are left out. The text alternates between the chart and the chart
with a comment line added, as the edits of `lsp_latency` do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.instructions import ENVIRONMENT
from bench.runner_throughput import ROOT, export

SMALL, LARGE = 1, 3
WORK = {
    "check_stage (the compile diagnostics)": "check",
    "load_yaml (the positioned tree)": "load",
}
SCRIPT = """
import sys
from bench.generate import flat_chart_yaml
from statekit.compiler.source.loader import load_yaml
from statekit.lsp.stages import check_stage
text = flat_chart_yaml(500, 3)
texts = (text, text + "# edited\\n")
work = {"check": check_stage, "load": load_yaml}[sys.argv[1]]
check_stage(text, "/nowhere/chart.yaml")
for n in range(int(sys.argv[2])):
    work(texts[n % 2], "/nowhere/chart.yaml")
"""


def total(tree: Path, work: str, times: int, folder: Path) -> int:
    """Instructions of one process doing `work` `times` times on `tree`'s code."""
    out = folder / f"callgrind.{work}.{times}"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
         "-P", "-c", SCRIPT, work, str(times)],
        env=ENVIRONMENT | {"PYTHONPATH": f"{tree}{os.pathsep}{ROOT}"}, cwd=folder, check=True,
        capture_output=True,
    )  # fmt: skip
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"{out}: callgrind wrote no total")


def per_run(tree: Path, work: str, folder: Path) -> float:
    """Instructions one more run of `work` costs on `tree`'s code."""
    return (total(tree, work, LARGE, folder) - total(tree, work, SMALL, folder)) / (LARGE - SMALL)


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("bench.compile_instructions needs valgrind (apt-get install valgrind)")
    args = sys.argv[1:]
    before = args[args.index("--before") + 1] if "--before" in args else None
    only = args[args.index("--only") + 1] if "--only" in args else None
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        trees = {"this tree": ROOT}
        if before:
            trees[before] = export(before, folder / "before")
        print(f"| work | {' | '.join(trees)} |" + (" change |" if before else ""))
        print("|---|" + "---|" * (len(trees) + (1 if before else 0)))
        for label, work in WORK.items():
            if only not in (None, work):
                continue
            counts = [per_run(tree, work, folder) for tree in trees.values()]
            cells = " | ".join(f"{c / 1e6:,.1f} M" for c in counts)
            change = f" {100 * (counts[0] / counts[1] - 1):+.1f}% |" if before else ""
            print(f"| {label} | {cells} |{change}", flush=True)


if __name__ == "__main__":
    main()

"""`statekit lint` of charts of many parallel regions, each run as a fresh process.

Run: `python -m bench.compositional_lint [RUNS] [--against DIR [--slow]]`. Charts (the
generator of `bench.explore_scaling`: each region a cycle of states with
NEXT/PREV/JUMP events, `reject: {'*': ...}` on the region):

- `independent 20x3`: twenty regions that never interact (3^20 configurations
  as a product), explored apart (`statekit.analysis.compositional`);
- `independent 3x22`: three of 22 states (10,648 as a product, just past the
  10,000 above which regions are explored apart), apart;
- `interacting 3x22`: the same regions all taking a `TICK` event: one
  component, so the product is built, as before, after the coupling analysis
  has looked for components.

Each case runs RUNS times (3 by default), the cases taking turns, through
`bench._fresh_process.run_fresh` (the peak memory is the lint process's own).
`--against DIR` also runs each case with another checkout's `statekit/` package
in DIR (say, the code before the change: `git archive REV statekit | tar -x -C
DIR`), interleaved; `independent 20x3` with that checkout (the product, which
stops at the bound after minutes) only with `--slow`, and then once. Each line:
wall and CPU time and peak RSS, median and range, and the exit code(s) (1:
findings or `analysis-limit`).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from bench._fresh_process import environment, run_fresh
from bench.explore_scaling import regions_chart_yaml
from bench.lint_machines import split_against

ROOT = Path(__file__).resolve().parent.parent
SLOW_S = 60.0
"""A run longer than this is not repeated (see the module docstring)."""


def interacting_chart_yaml(regions: int, states: int) -> str:
    """`regions_chart_yaml` with a `TICK` event that every region takes (back to its
    first state): the regions are one component."""
    text = regions_chart_yaml(regions, states)
    text = text.replace("events:\n", "events:\n  TICK: {}\n", 1)
    for r in range(regions):
        text = text.replace(
            f"  r{r}:\n    initial: s{r}_0\n",
            f"  r{r}:\n    initial: s{r}_0\n    on: {{TICK: s{r}_0}}\n",
            1,
        )
    return text


CASES = {
    "independent 20x3": regions_chart_yaml(20, 3),
    "independent 3x22": regions_chart_yaml(3, 22),
    "interacting 3x22": interacting_chart_yaml(3, 22),
}
SLOW_BEFORE = frozenset({"independent 20x3"})
"""Run with `--against`'s checkout only with `--slow` (see the module docstring)."""


def _spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    scaled = [v * scale for v in values]
    if len(scaled) == 1:
        return f"{scaled[0]:,.2f} {unit} (1 run)"
    return f"{statistics.median(scaled):,.2f} {unit} ({min(scaled):,.2f}-{max(scaled):,.2f})"


def main() -> None:
    """Print each case's figures (see the module docstring)."""
    against, args = split_against(sys.argv[1:])
    slow = "--slow" in args
    args = [a for a in args if a != "--slow"]
    runs = int(args[0]) if args else 3
    checkouts = {"": environment()}
    if against is not None:
        checkouts[" (--against)"] = environment(PYTHONPATH=str(against))
    rows: dict[str, list[tuple[float, float, int, int]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for name, text in CASES.items():
            files[name] = Path(folder) / (name.replace(" ", "_") + ".yaml")
            files[name].write_text(text, encoding="utf-8")
        for _ in range(runs):
            for name, path in files.items():
                for label, env in checkouts.items():
                    if label and name in SLOW_BEFORE and not slow:
                        continue
                    row = rows.setdefault(name + label, [])
                    if row and row[0][0] > SLOW_S:
                        continue
                    command = [sys.executable, "-P", "-m", "statekit.cli", "lint", str(path)]
                    row.append(run_fresh(command, ROOT, env))
    print(f"statekit lint as a fresh process, {runs} interleaved runs; median (min-max)")
    for name, found in rows.items():
        walls = [r[0] for r in found]
        cpus = [r[1] for r in found]
        peaks = [float(r[2]) for r in found]
        codes = sorted({r[3] for r in found})
        print(
            f"{name:>32}: wall {_spread(walls, 's')}, CPU {_spread(cpus, 's')}, "
            f"peak RSS {_spread(peaks, 'MB', 1e-6)}, exit {codes}"
        )


if __name__ == "__main__":
    main()

"""`statekit lint` on `machines/` and on the three domain charts, and what its reasoning costs.

Run: `python -m bench.lint_charts [RUNS] [--against DIR] [--reasoning]` (the last:
table 3 alone). Targets: `machines/`
and `tests/charts/domain/{subscription,support_ticket,shipment}.yaml` (three regions
with a dunning loop and cancel-at-period-end; SLA timers that pause; duplicated,
out-of-order carrier webhooks with a cancel race).

Three tables:

1. **In process** (the analysis without the interpreter's start-up): a fresh
   `python -P` process per code base imports statekit, lints each target once to
   warm up, then RUNS times (`statekit.lint.lint_files.lint_paths` with the default
   configuration: compile, explore, every rule); each line gives the median and range
   of the CPU time (`time.process_time`: what the load of other processes inflates
   least) in ms, and its ratio to compiling the same files in the same process (the
   limit: what reading the chart costs before any analysis). The workers of the
   code bases take turns, 3 runs each, until RUNS runs are done.
2. **As a process**: `python -P -m statekit.cli lint TARGET`, whole-process wall
   and CPU time, RUNS interleaved rounds (15 by default), next to
   `yamllint TARGET` (the `bench` extra) when it is installed, as
   `bench.lint_machines` does.
3. **Reasoning**: during one lint of each target, how many run-feasibility
   checks the explorer made (`statekit.analysis.feasibility.Feasibility.check`),
   how many reached the solver (`statekit.analysis.smt.SmtQuestions.solve`, the
   others settled by cached answers or by candidate values), their total and
   median time, and how many were undecided.

`--against DIR` runs tables 1 and 2 also with the `statekit/` package of another
checkout in DIR (say main before a change: `git archive REV statekit | tar -x -C
DIR`), interleaved, and prints each target's ratio of this code's median to
that code's: the figure "within 1.5x of today's" is read from it. Bytecode is
compiled first, as an installed wheel has it (see `bench.lint_machines`).

Baseline: the code of main at d9a9e28 (the analysis as it was when these charts
were written), 2026-12-04, a 2-core machine shared with six other jobs (load
average 10-15: read the CPU times and the ratios, not the wall times);
`python -m bench.lint_charts 15 --against DIR` with DIR that same code, so the
two columns measure one code base twice (0.99-1.01x: the noise of the method):

    1. in process, CPU ms, median (min-max)   lint               compile          lint/compile
       machines/                              165.2 (143-188)    31.9 (28-36)     5.2x
       domain/subscription.yaml                19.1 (17-21)       7.1 (6.0-7.9)   2.7x
       domain/support_ticket.yaml              20.4 (18-23)       6.8 (5.8-7.2)   3.0x
       domain/shipment.yaml                     8.2 (7.5-8.9)     4.6 (4.0-5.5)   1.8x
    2. as a process, ms, median (min-max)     wall                CPU             wall / yamllint's
       machines/                              1080 (767-1500)     357 (333-388)   1.43x
       domain/subscription.yaml                525 (383-704)      187 (174-200)   1.53x
       domain/support_ticket.yaml              556 (333-772)      189 (174-214)   1.64x
       domain/shipment.yaml                    512 (330-724)      178 (167-189)   1.78x
    3. reasoning in one lint, CPU ms    lint  checks (ms)  z3 queries (ms)   each question to z3
       machines/                        233   686 (31)     1 (1.3, unsat)    median 0.56, max 1.7
       domain/subscription.yaml          32    76 (1.1)    0                 median 0.19, max 0.9
       domain/support_ticket.yaml        49     2 (0.1)    0                 median 1.10, max 1.5
       domain/shipment.yaml              17     2 (0.1)    0                 median 0.80, max 1.3

So today the reasoning is cheap: candidate values and the cache settle all but
one question (machines/, one z3 query of about 1 ms that proves a run
infeasible); put to z3 one by one, uncached, the questions take about 0.2-1 ms
each (686 of them 395 ms, more than the whole lint). "Within 1.5x of today's"
compares table 1's lint column (CPU) with this one, or better, reads
`this code / --against` with DIR holding d9a9e28's `statekit/`.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.lint_machines import split_against

ROOT = Path(__file__).resolve().parent.parent
TARGETS = (
    "machines/",
    "tests/charts/domain/subscription.yaml",
    "tests/charts/domain/support_ticket.yaml",
    "tests/charts/domain/shipment.yaml",
)
PER_WORKER = 3
"""In-process runs per worker process; the code bases' workers take turns."""


# -- the worker: runs inside a `python -P` process of one code base --------------------


def worker(runs: int) -> None:
    """Print, as JSON, each target's lint and compile CPU times (ms) over `runs` runs."""
    from statekit.compiler.pipeline import compile_file
    from statekit.lint.config import LintConfig
    from statekit.lint.lint_files import collect_files, lint_paths

    config = LintConfig()
    found: dict[str, dict[str, list[float]]] = {}
    for target in TARGETS:
        files = collect_files([ROOT / target])
        lint_paths([ROOT / target], config)  # warm-up: lazy imports, z3 loaded
        lint_ms: list[float] = []
        compile_ms: list[float] = []
        for _ in range(runs):
            began = time.process_time()
            lint_paths([ROOT / target], config)
            lint_ms.append((time.process_time() - began) * 1000)
            began = time.process_time()
            for file in files:
                compile_file(file)
            compile_ms.append((time.process_time() - began) * 1000)
        found[target] = {"lint": lint_ms, "compile": compile_ms}
    print(json.dumps(found))


def reasoning() -> dict[str, dict[str, float]]:
    """Per target: feasibility checks, solver queries and their times during one lint."""
    from statekit.analysis import feasibility, smt
    from statekit.analysis.guard_facts import GuardFact, Verdict
    from statekit.lint.config import LintConfig
    from statekit.lint.lint_files import lint_paths

    checks: list[float] = []
    queries: list[float] = []
    verdicts: list[str] = []
    forced: list[float] = []
    solvers: dict[int, smt.SmtQuestions] = {}
    check = feasibility.Feasibility.check
    solve = smt.SmtQuestions.solve

    def timed_check(
        self: feasibility.Feasibility, event: str | None, facts: Sequence[GuardFact]
    ) -> Verdict:
        began = time.process_time()
        try:
            return check(self, event, facts)
        finally:
            checks.append(time.process_time() - began)
            # the same question put to a solver of its own, uncached and unsampled: what
            # each question would cost if every one went to z3
            solver = solvers.get(id(self))
            if solver is None:
                solver = solvers[id(self)] = smt.SmtQuestions(self.chart)
            began = time.process_time()
            solve(solver, event, facts)
            forced.append(time.process_time() - began)

    def timed_solve(
        self: smt.SmtQuestions, event: str | None, facts: Sequence[GuardFact]
    ) -> Verdict:
        began = time.process_time()
        try:
            verdict = solve(self, event, facts)
            verdicts.append(verdict.name)
            return verdict
        finally:
            queries.append(time.process_time() - began)

    lint_paths([ROOT / TARGETS[0]], LintConfig())  # z3 and the modules loaded first
    table: dict[str, dict[str, float]] = {}
    feasibility.Feasibility.check = timed_check  # type: ignore[method-assign]
    smt.SmtQuestions.solve = timed_solve  # type: ignore[method-assign]
    try:
        for target in TARGETS:
            checks.clear()
            queries.clear()
            verdicts.clear()
            forced.clear()
            began = time.process_time()
            lint_paths([ROOT / target], LintConfig())
            total = time.process_time() - began
            table[target] = {
                "lint_ms": (total - sum(forced)) * 1000,
                "checks": len(checks),
                "checks_ms": sum(checks) * 1000,
                "queries": len(queries),
                "queries_ms": sum(queries) * 1000,
                "median_query_ms": statistics.median(queries) * 1000 if queries else 0.0,
                "max_query_ms": max(queries) * 1000 if queries else 0.0,
                "infeasible": verdicts.count("INFEASIBLE"),
                "undecided": verdicts.count("UNDECIDED"),
                "forced_ms": sum(forced) * 1000,
                "median_forced_ms": statistics.median(forced) * 1000 if forced else 0.0,
                "max_forced_ms": max(forced) * 1000 if forced else 0.0,
            }
    finally:
        feasibility.Feasibility.check = check  # type: ignore[method-assign]
        smt.SmtQuestions.solve = solve  # type: ignore[method-assign]
    return table


# -- the driver ---------------------------------------------------------------------------


def in_process(python_path: Path | None, runs: int) -> dict[str, dict[str, list[float]]]:
    """The worker's times, run in a fresh process with `python_path` first on the path."""
    env = dict(os.environ)
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    args = [sys.executable, "-P", str(Path(__file__)), "--worker", str(runs)]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    found: dict[str, dict[str, list[float]]] = json.loads(done.stdout)
    return found


def process_times(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU: user + system) ms of one run of `args` as a fresh process."""
    began = time.perf_counter()
    out = subprocess.DEVNULL
    process = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=out, env=env)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return (time.perf_counter() - began) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def cell(values: list[float]) -> str:
    """`median (min-max)`."""
    return f"{statistics.median(values):7.1f} ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    """Print the three tables (see the module docstring)."""
    args = sys.argv[1:]
    if args[:1] == ["--worker"]:
        worker(int(args[1]))
        return
    against, args = split_against(args)
    reasoning_only = "--reasoning" in args
    args = [a for a in args if a != "--reasoning"]
    runs = int(args[0]) if args else 15
    if not reasoning_only:
        timings(runs, against)
    print_reasoning()


def timings(runs: int, against: Path | None) -> None:
    """Tables 1 and 2 (see the module docstring)."""
    bases = {"this code": None, **({"--against": against} if against else {})}
    for base in [ROOT, *([against] if against else [])]:
        compileall.compile_dir(base / "statekit", quiet=1, force=False)

    print(f"1. in process: {runs} runs per target after a warm-up; median (min-max) CPU ms")
    # the code bases take turns, a worker process of PER_WORKER runs each, so that a change
    # of the machine's load hits them alike
    inner: dict[str, dict[str, dict[str, list[float]]]] = {name: {} for name in bases}
    for _ in range(max(1, runs // PER_WORKER)):
        for name, path in bases.items():
            for target, measured in in_process(path, min(runs, PER_WORKER)).items():
                merged = inner[name].setdefault(target, {"lint": [], "compile": []})
                merged["lint"] += measured["lint"]
                merged["compile"] += measured["compile"]
    for target in TARGETS:
        for name, by_target in inner.items():
            lint_ms, compile_ms = by_target[target]["lint"], by_target[target]["compile"]
            ratio = statistics.median(lint_ms) / statistics.median(compile_ms)
            line = f"   {target:40} {name:10} lint {cell(lint_ms)}  compile {cell(compile_ms)}"
            print(f"{line}  {ratio:5.1f}x compile")
        if against is not None:
            mine = statistics.median(inner["this code"][target]["lint"])
            theirs = statistics.median(inner["--against"][target]["lint"])
            print(f"   {target:40} this code / --against: {mine / theirs:.2f}x")

    yamllint = shutil.which("yamllint", path=str(Path(sys.executable).parent))
    commands: dict[tuple[str, str], tuple[list[str], dict[str, str]]] = {}
    for target in TARGETS:
        for name, path in bases.items():
            env = dict(os.environ)
            if path is not None:
                env["PYTHONPATH"] = str(path)
            command_line = [sys.executable, "-P", "-m", "statekit.cli", "lint", target]
            commands[target, name] = (command_line, env)
        if yamllint is not None:
            commands[target, "yamllint"] = ([yamllint, target], dict(os.environ))
    times: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in commands}
    for _ in range(runs):
        for key, (command, env) in commands.items():
            times[key].append(process_times(command, env))
    print(f"2. as a process: {runs} interleaved rounds; median (min-max) ms, wall / CPU")
    for (target, name), rounds in times.items():
        walls, cpus = [w for w, _c in rounds], [c for _w, c in rounds]
        limit = times.get((target, "yamllint"))
        against_limit = ""
        if limit is not None and name != "yamllint":
            against_limit = (
                f"  {statistics.median(walls) / statistics.median(w for w, _c in limit):.2f}x"
            )
            against_limit += " yamllint (wall)"
        print(f"   {target:40} {name:10} {cell(walls)} / {cell(cpus)}{against_limit}")


def print_reasoning() -> None:
    """Table 3 (see the module docstring)."""
    print("3. reasoning during one lint (this code), CPU ms")
    head = f"   {'target':40} {'lint ms':>8} {'checks':>7} {'ms':>7} {'solver queries':>15}"
    print(f"{head} {'total ms':>9} {'median ms':>10} {'max ms':>7} {'infeasible':>10} undecided")
    table = reasoning()
    for target, row in table.items():
        print(
            f"   {target:40} {row['lint_ms']:8.1f} {row['checks']:7.0f} {row['checks_ms']:7.1f}"
            f" {row['queries']:15.0f} {row['queries_ms']:9.1f} {row['median_query_ms']:10.2f}"
            f" {row['max_query_ms']:7.2f} {row['infeasible']:10.0f} {row['undecided']:.0f}"
        )
    print("   every check's question also put to a solver of its own (no cache, no sampling):")
    for target, row in table.items():
        print(
            f"   {target:40} {row['checks']:5.0f} questions, {row['forced_ms']:7.1f} ms in all,"
            f" median {row['median_forced_ms']:.2f} ms, max {row['max_forced_ms']:.2f} ms"
        )


if __name__ == "__main__":
    main()

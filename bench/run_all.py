"""Run every benchmark script in this folder, one after the other, in fresh processes,
then render bench/README.md from the rows they recorded (`bench/report.py`).

Run: `python bench/run_all.py` (or `make bench`); `python bench/run_all.py NAME... [--
ARGUMENT...]` runs only those modules, with those arguments added (say `lsp_latency --
--before main`); the README is rendered from whatever build/bench/ holds. Each
script prints its own table as it goes; this records, per script, the load average
before and after it (`/proc/loadavg`), its wall time and what it printed
(build/bench/run/NAME.json), and the machine once (build/bench/machine.json).
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench import OUT_DIR  # noqa: E402
from bench.report import render_files  # noqa: E402

# Modules here that are not benchmarks: the chart generator, the hand reducers `engine_core`
# runs, this runner and the README renderer.
NOT_BENCHMARKS = {"__init__", "generate", "hand_flat", "hand_task", "run_all", "report"}

# Arguments a module runs with under `make bench`: one run per entry. Modules not listed
# run once without arguments.
ARGUMENTS: dict[str, list[list[str]]] = {
    "explore_scaling": [[], ["memory"]],
}

# Modules that print their figures but do not record rows yet: the README quotes what
# they printed in this run. Remove a module from here when it calls `bench.record`.
PRINTED_ONLY = frozenset(
    {
        "armed_timers",
        "async_runner",
        "broker_startup",
        "canonical_encoders",
        "clock_steps",
        "compile_instructions",
        "compositional_lint",
        "definitions",
        "dot_generation",
        "engine_core",
        "explain_machines",
        "explore_timers",
        "growth",
        "in_transaction",
        "inspect_pages",
        "instructions",
        "lint_charts",
        "parked_listing",
        "peers",
        "race_scaling",
        "relay_throughput",
        "retention",
        "runner_throughput",
        "scale_out",
        "store_writes",
        "timer_cost",
        "timer_throughput",
        "worker_startup",
    }
)


def bench_modules() -> list[str]:
    """The names of every benchmark module in bench/, in the order they run."""
    return [
        script.stem
        for script in sorted(HERE.glob("*.py"))
        if script.stem not in NOT_BENCHMARKS and not script.stem.startswith("_")
    ]


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages (empty where /proc/loadavg is missing)."""
    try:
        return [float(field) for field in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it, else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def postgres_version() -> str:
    """The version of the PostgreSQL server programs the runner's benches start."""
    from statekit.testing.postgres_server import find_bindir

    bindir = find_bindir()
    if bindir is None:
        return "not installed"
    done = subprocess.run(
        [str(bindir / "postgres"), "--version"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or done.stderr.strip()


def disk_commit_ms(commits: int = 30) -> float:
    """Median milliseconds of a SQLite commit with `synchronous=FULL` in build/ (one row,
    rollback journal): what one durable transaction costs on this disk."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT_DIR) as folder:
        connection = sqlite3.connect(Path(folder) / "commit.db", isolation_level=None)
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE t (n INTEGER)")
        times = []
        for n in range(commits):
            start = time.perf_counter()
            connection.execute("BEGIN")
            connection.execute("INSERT INTO t VALUES (?)", (n,))
            connection.execute("COMMIT")
            times.append((time.perf_counter() - start) * 1000)
        connection.close()
    return statistics.median(times)


def git_revision() -> str:
    """`git describe`-like: the short commit, with `+changes` when the tree is dirty."""
    commit = git_output("rev-parse", "--short", "HEAD")
    dirty = git_output("status", "--porcelain", "--untracked-files=no")
    return f"{commit or 'unknown'}{' +changes' if dirty else ''}"


def git_output(*arguments: str) -> str:
    """What `git ARGUMENTS` prints in the repository (empty when git fails)."""
    done = subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def now_text() -> str:
    """The date and time in UTC, to the minute."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def machine() -> dict[str, object]:
    """What the figures of this run were taken on."""
    return {
        "date": now_text(),
        "revision": git_revision(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": postgres_version(),
        "disk_commit_ms": round(disk_commit_ms(), 3),
        "load": load_average(),
    }


def run_one(name: str, mode: list[str], extra: list[str]) -> int:
    """Run `python -m bench.NAME MODE EXTRA`, echoing and keeping what it prints (the
    report finds the run by its MODE, the arguments `ARGUMENTS` gives)."""
    arguments = [*mode, *extra]
    label = " ".join([f"bench/{name}.py", *arguments])
    print(f"\n== {label}", flush=True)
    before = load_average()
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", f"bench.{name}", *arguments],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    printed = []
    for line in process.stdout:
        print(line, end="", flush=True)
        printed.append(line)
    returncode = process.wait()
    run = {
        "name": name,
        "mode": " ".join(mode),
        "arguments": arguments,
        "date": now_text(),
        "load_before": before,
        "load_after": load_average(),
        "wall_s": round(time.perf_counter() - start, 1),
        "returncode": returncode,
        "printed": "".join(printed),
    }
    path = OUT_DIR / "run" / f"{'_'.join([name, *mode])}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return returncode


def main(argv: list[str] | None = None) -> None:
    """Run the named modules (default: all), then render bench/README.md."""
    words = sys.argv[1:] if argv is None else argv
    extra = words[words.index("--") + 1 :] if "--" in words else []
    names = words[: words.index("--")] if "--" in words else words
    names = names or bench_modules()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "machine.json").write_text(json.dumps(machine(), indent=1) + "\n")
    failed = []
    for name in names:
        for mode in ARGUMENTS.get(name, [[]]):
            if run_one(name, mode, extra):
                failed.append(" ".join([name, *mode]))
    render_files()
    print(f"\nbench/README.md rendered from {OUT_DIR}", flush=True)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()

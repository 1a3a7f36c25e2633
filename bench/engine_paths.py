"""The engine's three paths on the flat and guarded streams, this tree next to another
revision's, in one run.

Run: `python -m bench.engine_paths [--before REV] [--rounds N]` from the repository root.
On the 14,000-event streams of bench/xstate_peer.py (the flat 6-state chart of
bench/_streams.py, and bench/hand_flat.py's guarded chart with payloads varying per
event) it times, in µs of CPU per event, each path without and with the evidence built
(`Result.evidence` read, as the runner reads it): the cached path (`Chart.send`: the
memo of data-free macrosteps; on the guarded chart every event reads data, so it takes
the general path), the general path (`Chart(memo=False).send`: the selection and
macrostep compiled per (configuration, event), run on the event's data) and the
reference loop (`memoised=False`). Each round runs a fresh process per tree (the median
of 3 passes after a warm one); with `--before REV` the `statekit` package of git
revision REV (exported with `git archive`) takes turns with this tree's, round by
round, so both are measured under the same load. A revision before `Chart(memo=...)`
has no general path of its own on the flat chart: its row is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import TIMES, Row, Spread, record

ROOT = Path(__file__).resolve().parents[1]
PATHS = (
    "cached (Chart.send)",
    "cached, evidence built",
    "general (Chart(memo=False))",
    "general, evidence built",
    "reference (memoised=False)",
    "reference, evidence built",
)
CHARTS = ("flat chart", "flat guarded + assign")


def measure() -> dict[str, float]:
    """µs per event of each path on each chart, with the `statekit` this process imports."""
    from bench._streams import FLAT_CHART, flat_stream
    from bench.engine_core import compiled, sender, statekit_rate
    from bench.hand_flat import GUARDED_CHART, guarded_stream
    from statekit.engine.chart import Chart

    found: dict[str, float] = {}
    for name, text, stream in (
        (CHARTS[0], FLAT_CHART, flat_stream()),
        (CHARTS[1], GUARDED_CHART, guarded_stream()),
    ):
        chart = compiled(text, "chart.yaml")
        try:
            general: Chart | None = compiled(text, "chart.yaml", memo=False)
        except TypeError:  # a revision before `Chart(memo=...)`
            general = None
        sends = (
            (chart, sender(chart)),
            (chart, sender(chart, evidence="built")),
            (general, None if general is None else sender(general)),
            (general, None if general is None else sender(general, evidence="built")),
            (chart, sender(chart, memoised=False)),
            (chart, sender(chart, memoised=False, evidence="built")),
        )
        for path, (on, send) in zip(PATHS, sends, strict=True):
            if on is None or send is None:
                continue
            statekit_rate(on, stream, send)  # warm the caches
            rates = [statekit_rate(on, stream, send) for _ in range(3)]
            found[f"{name}, {path}"] = 1e6 / statistics.median(rates)
    return found


def export(rev: str, folder: Path) -> Path:
    """The `statekit` package of git revision `rev`, unpacked in `folder` (made here)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", rev, "statekit"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def child(tree: Path | None) -> dict[str, float]:
    """`measure()` in a fresh process whose `statekit` comes from `tree` (None: this one)."""
    path = str(ROOT) if tree is None else f"{tree}{os.pathsep}{ROOT}"
    done = subprocess.run(
        [sys.executable, "-P", "-m", "bench.engine_paths", "--child"],
        env={**os.environ, "PYTHONPATH": path},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, float] = json.loads(done.stdout)
    return found


def main(argv: list[str] | None = None) -> None:
    """Print and record each path's µs per event, and its ratio to the code before."""
    parser = argparse.ArgumentParser(prog="python -m bench.engine_paths")
    parser.add_argument("--before", metavar="REV", help="also run the engine of REV, in turns")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per tree")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure()))
        return
    with tempfile.TemporaryDirectory() as folder:
        trees: dict[str, Path | None] = {"now": None}
        if args.before:
            trees["before"] = export(args.before, Path(folder) / "before")
        times: dict[str, dict[str, list[float]]] = {key: {} for key in trees}
        for _ in range(args.rounds):
            for key, tree in trees.items():
                for what, us in child(tree).items():
                    times[key].setdefault(what, []).append(us)
    rows = []
    for what, samples in times["now"].items():
        now = Spread.of(samples)
        limit = ratio = ""
        if "before" in times and what in times["before"]:
            then = Spread.of(times["before"][what])
            limit = f"the code before, same run: {then.text('µs', 2)}"
            ratio = f"{now.median / then.median:.2f}{TIMES} the time of the code before"
        print(f"{what:<48} {now.text('µs', 2):>24}  {limit}")
        rows.append(
            Row(what=f"{what}: CPU per event", statekit=now.text("µs", 2), limit=limit, ratio=ratio)
        )
    record("engine_paths", rows)


if __name__ == "__main__":
    main()

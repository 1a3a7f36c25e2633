"""statekit next to XState 5's actor, on the same streams, in one run.

Run: `python -m bench.xstate_peer` from the repository root (`--runs N`, default 7;
`make bench` runs it; `make test` does not). Needs Node.js and npm: the first run
installs XState (`XSTATE`, pinned) from npm into build/bench-node.

Two charts, each driven by the same 14,000-event stream in both engines:

- the flat 6-state chart of bench/_streams.py (no guards, no context), its cycle
  `flat_stream`;
- the flat chart with a payload, a data guard and an assign on every transition
  (bench/hand_flat.py's `GUARDED_CHART`), its stream with payloads varying per event
  (`guarded_stream`).

XState's side is bench/xstate_peer.mjs: the same states and transitions built with
`createMachine` (the guard and the assign as a named guard and an `assign` action),
driven through `createActor(machine).start()` and `actor.send`. It validates no payload
and keeps no evidence; statekit checks every payload against its declaration.

First the agreement: both engines run the whole stream and must reach the same state
(and, on the guarded chart, the same `count`) after every event. Then each round times
XState (a fresh Node process: 5 untimed passes for its JIT, then the median of 3 timed
passes) and, right after it in the same round, statekit's three paths, each without
and with the evidence built (`Result.evidence` read, as the runner reads it): the
cached path (`Chart.send`: the memo of data-free macrosteps, a result looked up where
no data can matter; on the guarded chart every event reads data, so `Chart.send`
takes the general path there), the general path (`Chart(memo=False).send`: the
selection and macrostep compiled per (configuration, event) and run on this event's
payload and context, what every event takes when nothing is memoised; the aim,
at least `AIM` times XState's rate, is on these rows) and the reference loop
(`memoised=False`: SCXML's macrostep loop, the oracle of the differential tests, shown
without an aim). Rates are in
CPU time of each process; each ratio is statekit's rate over XState's of the same round;
rows show the median over the rounds and the range (low-high). The machine may be shared: the
load average is printed with the table, and only ratios taken in the same run mean
anything.
The rows are also written to build/bench/xstate_peer.json (`record`), in the form
bench/README.md's tables are rendered from.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from bench import Row, record
from bench._peer_common import FLAT_TRANSITIONS
from bench._streams import FLAT_CHART, Stream, flat_stream
from bench.engine_core import Send, compiled, sender, statekit_rate
from bench.hand_flat import GUARDED_CHART, guarded_stream
from statekit.engine.chart import Chart

ROOT = Path(__file__).resolve().parent.parent
XSTATE = "xstate@5.33.3"
"""The npm package measured (pinned: figures of another version are not comparable)."""
PREFIX = ROOT / "build" / "bench-node"
"""Where XState is installed (apart from the test tools in build/node)."""
SCRIPT = Path(__file__).with_suffix(".mjs")
WARM_PASSES, TIMED_PASSES = 5, 3


def install() -> Path:
    """Install `XSTATE` into `PREFIX` unless that version is there; return the path of
    the Node script, copied next to the `node_modules` it imports."""
    name, version = XSTATE.split("@")
    manifest = PREFIX / "node_modules" / name / "package.json"
    if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
        if shutil.which("node") is None or shutil.which("npm") is None:
            raise SystemExit(
                "bench/xstate_peer.py needs Node.js and npm: apt-get install nodejs npm"
            )
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(PREFIX),
                "--save-exact",
                "--no-audit",
                "--no-fund",
                XSTATE,
            ],
            check=True,
        )
    script = PREFIX / SCRIPT.name
    shutil.copyfile(SCRIPT, script)
    return script


def node(script: Path, request: dict[str, Any]) -> Any:
    """Run the Node script on one request; its JSON answer."""
    done = subprocess.run(
        ["node", str(script)],
        input=json.dumps(request).encode(),
        capture_output=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"node {script} failed:\n{done.stderr.decode()}")
    return json.loads(done.stdout)


class Case(NamedTuple):
    """One chart and its stream, in both engines."""

    name: str
    chart: Chart
    stream: Stream
    guarded: bool

    def request(self, mode: str) -> dict[str, Any]:
        """The Node script's request for this case."""
        events = [[event, None if p is None else p["n"]] for event, p, _ in self.stream]
        return {
            "transitions": FLAT_TRANSITIONS,
            "guarded": self.guarded,
            "events": events,
            "mode": mode,
            "warm": WARM_PASSES,
            "runs": TIMED_PASSES,
        }


def agree(script: Path, case: Case) -> None:
    """XState and `Chart.send` reach the same state (and `count`) after every event."""
    theirs = node(script, case.request("trace"))
    assert len(theirs) == len(case.stream), case.name
    state = case.chart.start()
    for i, ((event, payload, event_id), (value, count)) in enumerate(
        zip(case.stream, theirs, strict=True)
    ):
        result = case.chart.send(state, event, payload, event_id=event_id)
        state = result.state
        where = f"{case.name}, event {i} ({event} {payload!r})"
        assert result.status.value == "APPLIED", where
        assert (value,) == state.leaves, f"{where}: XState {value!r}, statekit {state.leaves}"
        if case.guarded:
            assert count == state.context["count"], f"{where}: count {count} != {state.context}"


class Ratios(NamedTuple):
    """A path's events/s per round and XState's in the same rounds."""

    what: str
    ours: list[float]
    theirs: list[float]

    def ratios(self) -> list[float]:
        return [o / t for o, t in zip(self.ours, self.theirs, strict=True)]


def spread(values: Sequence[float], scale: float = 1e3, digits: int = 0, unit: str = "k") -> str:
    """`median (low-high)` of `values`."""
    m, lo, hi = (statistics.median(values), min(values), max(values))
    return f"{m / scale:,.{digits}f}{unit} ({lo / scale:,.{digits}f}-{hi / scale:,.{digits}f})"


def measure(script: Path, case: Case, runs: int) -> list[Ratios]:
    """`runs` rounds of XState then statekit's three paths on `case`."""
    general = Chart(case.chart.ir, memo=False)
    paths: list[tuple[str, Chart, Send]] = [
        ("cached path (Chart.send)", case.chart, sender(case.chart)),
        ("cached path, evidence built", case.chart, sender(case.chart, evidence="built")),
        ("general path (Chart(memo=False).send)", general, sender(general)),
        ("general path, evidence built", general, sender(general, evidence="built")),
        ("reference loop (memoised=False)", case.chart, sender(case.chart, memoised=False)),
        (
            "reference loop, evidence built",
            case.chart,
            sender(case.chart, memoised=False, evidence="built"),
        ),
    ]
    timers: list[Callable[[], float]] = [
        partial(statekit_rate, chart, case.stream, send) for _, chart, send in paths
    ]
    for timer in timers:  # warm the caches and the interpreter
        timer()
    rows = [Ratios(f"{case.name}, {what}", [], []) for what, _, _ in paths]
    for _ in range(runs):
        xstate = statistics.median(node(script, case.request("time")))
        for row, timer in zip(rows, timers, strict=True):
            row.theirs.append(xstate)
            row.ours.append(timer())
    return rows


def main() -> None:
    """Check agreement event by event, then print the table (Markdown rows)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    script = install()
    cases = [
        Case("flat chart", compiled(FLAT_CHART, "flat.yaml"), flat_stream(), False),
        Case(
            "flat guarded + assign",
            compiled(GUARDED_CHART, "flat_guarded.yaml"),
            guarded_stream(),
            True,
        ),
    ]
    for case in cases:
        agree(script, case)
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    print(
        f"XState and statekit agree after every event of both streams; {XSTATE} on Node "
        f"{version.strip()}, {args.runs} rounds, {len(cases[0].stream):,} events per stream"
    )
    rows = [row for case in cases for row in measure(script, case, args.runs)]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average after the run: {load}")
    print("| what | statekit | XState actor, same rounds | statekit / XState | aim |")
    print("|---|---|---|---|---|")
    recorded: list[Row] = []
    for row in rows:
        ratios = row.ratios()
        aimed = "general" in row.what  # the aim is on the general path; the others are shown
        met = statistics.median(ratios) >= AIM
        aim = "" if not aimed else f"at least {AIM}x: " + ("met" if met else "**not met**")
        ours, theirs, ratio = spread(row.ours), spread(row.theirs), spread(ratios, 1, 2, "x")
        print(f"| {row.what} | {ours} ev/s | {theirs} ev/s | {ratio} | {aim} |")
        recorded.append(
            Row(
                what=row.what,
                statekit=f"{ours} ev/s",
                limit=f"XState actor {theirs} ev/s",
                ratio=ratio,
                aim="" if not aimed else f"at least {AIM}x",
                met=None if not aimed else met,
                headline=aimed,
            )
        )
    record("xstate_peer", recorded)


AIM = 1.5
"""statekit's general path, with and without the evidence, against XState's actor."""


if __name__ == "__main__":
    main()

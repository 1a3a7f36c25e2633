"""`statekit lsp`: time from didChange to the compile diagnostics and to the analysis's,
and what the server holds after a long scripted edit session.

Run: `python -m bench.lsp_latency [--before REV] [--rounds N]`. Drives the server over
stdio with the test suite's LSP client (`tests/lsp_client.py`) on `machines/task.yaml`
and on a generated 500-state chart, N rounds (3) of a fresh server each; with
`--before REV` the server of git revision REV (its `statekit` exported with `git
archive`) takes turns with this tree's, round by round, so both are measured in one
run. The compile figures are taken with no debounce (`--compile-delay 0`); the
editor's figure adds the debounce (50 ms by default).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lsp_client import LanguageServer  # noqa: E402

from bench import TIMES, Row, Spread, record  # noqa: E402
from bench.generate import flat_chart_yaml  # noqa: E402

NEVER_MS = 10_000_000


class Session:
    """One server and one open document whose versions are counted."""

    def __init__(self, folder: Path, name: str, text: str, tree: Path | None = None) -> None:
        """Open `text` as `folder/name` in a fresh server; `tree`: a folder holding the
        `statekit` package to run instead of this repository's."""
        # -P: `statekit` comes from the installation or from `tree`, never the current folder
        python = [sys.executable, "-P"]
        if tree is not None:
            python = ["env", f"PYTHONPATH={tree}", *python]
        self.server = LanguageServer(
            [
                *python,
                "-m",
                "statekit",
                "lsp",
                "--compile-delay",
                "0",
                "--analysis-delay",
                str(NEVER_MS),
            ],
            timeout_s=120,
        )
        self.server.request(
            "initialize", {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}
        )
        self.server.notify("initialized", {})
        self.uri = (folder / name).as_uri()
        self.version = 1
        self.text = text
        self.server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": self.uri, "languageId": "yaml", "version": 1, "text": text}},
        )
        self.wait(1)

    def wait(self, version: int) -> list[Any]:
        params = self.server.notification(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == self.uri and p.get("version") == version,
        )
        self.server.notifications.clear()
        found: list[Any] = params["diagnostics"]
        return found

    def edit(self, n: int) -> float:
        """Add (even n) or remove (odd n) a comment line at the end; seconds to the compile
        stage's diagnostics."""
        self.version += 1
        last = self.text.count("\n")
        end = {"line": last + 1, "character": 0} if n % 2 else {"line": last, "character": 0}
        start = time.perf_counter()
        self.server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [
                    {
                        "range": {"start": {"line": last, "character": 0}, "end": end},
                        "text": "" if n % 2 else "# edited\n",
                    }
                ],
            },
        )
        self.wait(self.version)
        return time.perf_counter() - start

    def analyse(self) -> float:
        """Save; seconds to the analysis diagnostics."""
        start = time.perf_counter()
        self.server.notify("textDocument/didSave", {"textDocument": {"uri": self.uri}})
        self.wait(self.version)
        return time.perf_counter() - start

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self.server.request(
            "workspace/executeCommand", {"command": "statekit.serverStats", "arguments": []}
        )
        return result

    def cpu_s(self) -> float:
        """The server process's CPU time so far (user + system, from /proc)."""
        fields = Path(f"/proc/{self.server.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.server.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return -1


def export(rev: str, folder: Path) -> Path:
    """The `statekit` package of git revision `rev`, unpacked in `folder` (made here)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", rev, "statekit"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


Times = tuple[list[float], list[float], list[float]]
"""Milliseconds: each edit to its compile diagnostics, each save to its analysis
diagnostics, and the server's CPU per edit of each session."""


def chart_times(folder: Path, text: str, tree: Path | None) -> Times:
    """One fresh server on `text`: the ms of 9 edits to the compile diagnostics, of 3
    saves to the analysis diagnostics, and the server's CPU ms per edit over the 9."""
    session = Session(folder, "chart.yaml", text, tree)
    try:
        cpu_before = session.cpu_s()
        compile_times = [session.edit(n) * 1000 for n in range(9)]
        cpu_ms = (session.cpu_s() - cpu_before) * 1000 / 9
        analysis_times = []
        for n in range(3):
            session.edit(n)
            analysis_times.append(session.analyse() * 1000)
    finally:
        session.server.close()
    return compile_times, analysis_times, [cpu_ms]


STAGES = (
    ("didChange → compile diagnostics", 0),
    ("didSave → analysis diagnostics", 1),
    ("the server's CPU time per edit", 2),
)


def latency_rows(name: str, times: dict[str, Times], aim_ms: float | None) -> list[Row]:
    """The compile, analysis and CPU rows of one chart; `times` by tree ("now", "before").
    The aim is held against the time an editor waits (on a loaded machine the CPU time
    is what the load inflates least)."""
    rows = []
    for stage, index in STAGES:
        now = Spread.of(times["now"][index])
        before = times.get("before")
        limit = ratio = ""
        if before is not None:
            then = Spread.of(before[index])
            limit = f"the code before, same run: {then.text('ms')}"
            ratio = f"{now.median / then.median:.2f}{TIMES} the time of the code before"
        aimed = aim_ms is not None and index == 0
        rows.append(
            Row(
                what=f"{name}: {stage}",
                statekit=now.text("ms"),
                limit=limit,
                ratio=ratio,
                aim=f"under {aim_ms:g} ms" if aimed else "",
                met=now.median < aim_ms if aimed and aim_ms is not None else None,
                headline=aimed,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print and record the medians per chart, then the long session's retained objects
    and memory."""
    parser = argparse.ArgumentParser(prog="python -m bench.lsp_latency")
    parser.add_argument("--before", metavar="REV", help="also run the server of REV, in turns")
    parser.add_argument("--rounds", type=int, default=3, help="fresh servers per chart")
    args = parser.parse_args(argv)
    charts = {
        "machines/task.yaml": ((ROOT / "machines" / "task.yaml").read_text("utf-8"), None),
        "generated, 500 states": (flat_chart_yaml(500, 3), 100.0),
    }
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        trees: dict[str, Path | None] = {"now": None}
        if args.before:
            trees["before"] = export(args.before, Path(folder) / "before")
        heads = f"{'compile ms (median)':>20} {'analysis ms':>12} {'CPU ms/edit':>13}"
        print(f"{'chart':<24} {'tree':<7} {heads}")
        for name, (text, aim_ms) in charts.items():
            times: dict[str, Times] = {key: ([], [], []) for key in trees}
            for _ in range(args.rounds):
                for key, tree in trees.items():
                    found = chart_times(Path(folder), text, tree)
                    for kept, new in zip(times[key], found, strict=True):
                        kept.extend(new)
            for key in trees:
                medians = [statistics.median(found) for found in times[key]]
                print(
                    f"{name:<24} {key:<7} {medians[0]:>20.1f} {medians[1]:>12.1f}"
                    f" {medians[2]:>13.1f}"
                )
            rows += latency_rows(name, times, aim_ms)
        session = Session(Path(folder), "task.yaml", charts["machines/task.yaml"][0])
        try:
            before = (session.stats(), session.rss_kib())
            for n in range(1000):
                session.edit(n)
                if n % 250 == 249:
                    session.analyse()
            after = (session.stats(), session.rss_kib())
        finally:
            session.server.close()
        print("long session (1,000 edits, an analysis every 250):")
        for label, (stats, rss) in (("start", before), ("end", after)):
            print(
                f"  {label:<5} objects {stats['objects']:>8}  documents {stats['documents']}"
                f"  handlers {stats['handlers']}  RSS {rss} KiB"
            )
    (start_stats, start_rss), (end_stats, end_rss) = before, after
    rows += [
        Row(
            what="long session on machines/task.yaml (1,000 edits, an analysis every 250):"
            " live objects in the server, start → end",
            statekit=f"{start_stats['objects']:,} → {end_stats['objects']:,}",
        ),
        Row(
            what="the same session: resident memory, start → end",
            statekit=f"{start_rss / 1024:.1f} → {end_rss / 1024:.1f} MiB",
        ),
    ]
    record("lsp_latency", rows)


if __name__ == "__main__":
    main()

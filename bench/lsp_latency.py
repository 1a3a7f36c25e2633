"""`statekit lsp`: time from didChange to the compile diagnostics and to the analysis's,
and what the server holds after a long scripted edit session.

Run: `python -m bench.lsp_latency`. Drives the server over stdio with the test
suite's LSP client (`tests/lsp_client.py`) on `machines/task.yaml` and on a
generated 500-state chart. The compile figures are taken with no debounce
(`--compile-delay 0`); the editor's figure adds the debounce (50 ms by default).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lsp_client import LanguageServer  # noqa: E402

from bench.generate import flat_chart_yaml  # noqa: E402

NEVER_MS = 10_000_000


class Session:
    """One server and one open document whose versions are counted."""

    def __init__(self, folder: Path, name: str, text: str) -> None:
        self.server = LanguageServer(
            [
                sys.executable,
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

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.server.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return -1


def main() -> None:
    """Print the medians per chart, then the long session's retained objects and memory."""
    charts = {
        "machines/task.yaml": (ROOT / "machines" / "task.yaml").read_text(encoding="utf-8"),
        "generated, 500 states": flat_chart_yaml(500, 3),
    }
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'chart':<24} {'compile ms (median)':>20} {'analysis ms (median)':>21}")
        for name, text in charts.items():
            session = Session(Path(folder), "chart.yaml", text)
            try:
                compile_times = [session.edit(n) for n in range(9)]
                analysis_times = []
                for n in range(3):
                    session.edit(n)
                    analysis_times.append(session.analyse())
            finally:
                session.server.close()
            print(
                f"{name:<24} {statistics.median(compile_times) * 1000:>20.1f}"
                f" {statistics.median(analysis_times) * 1000:>21.1f}"
            )
        session = Session(Path(folder), "task.yaml", charts["machines/task.yaml"])
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


if __name__ == "__main__":
    main()

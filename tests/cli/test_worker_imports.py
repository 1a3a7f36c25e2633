"""`statekit worker` loads only what delivering timers needs, so that its start-up as a
process cannot grow back silently (bench/worker_startup.py): the analysis, the lint
rules, the diagrams and the language server are never imported by `worker --once`, on
either store; the analysis is imported only to say what changed in a refused chart."""

from __future__ import annotations

from pathlib import Path

from runner_charts import LEASE, chart_from, write_chart
from test_lint_imports import loaded, under

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

NEVER = ("statekit.analysis", "statekit.lint", "statekit.diagrams", "statekit.lsp", "rich")


def test_worker_once_imports_no_analysis_or_lint(store_url: str, tmp_path: Path) -> None:
    Runner(chart_from(LEASE), open_store(store_url)).create("i0")
    chart = write_chart(LEASE, tmp_path, "lease")
    modules, output = loaded(
        ["worker", "--db", store_url, "--chart", str(chart), "--once"], tmp_path
    )
    assert "delivering the timers of lease v1" in output, output
    assert under(modules, NEVER) == []


def test_a_refused_changed_chart_still_says_what_changed(pg_url: str, tmp_path: Path) -> None:
    Runner(chart_from(LEASE), open_store(pg_url)).create("i0")
    changed = LEASE.replace("1d: stale", "2d: stale")
    chart = write_chart(changed, tmp_path, "lease")
    modules, output = loaded(["worker", "--db", pg_url, "--chart", str(chart), "--once"], tmp_path)
    assert "What changed:" in output, output
    assert "Traceback" not in output and "statekit.analysis.diff" in modules

"""`statekit explain`, `statekit paths` and `lint --max-configurations` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from statekit.api import compile_chart
from statekit.cli.progress import terminal_progress
from statekit.compiler.ir import CompiledChart

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "lint" / "fixtures" / "rules"
GRID = """\
statechart: grid
events: {A: {}, B: {}}
parallel: true
states:
  x: {initial: x0, states: {x0: {on: {A: x1}}, x1: {on: {A: x0}}}}
  y: {initial: y0, states: {y0: {on: {B: y1}}, y1: {on: {B: y0}}}}
"""


def chart_of_machine(name: str) -> CompiledChart:
    """A reference machine's compiled chart."""
    return compile_chart(ROOT / "machines" / f"{name}.yaml")


def statekit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run the real command in a fresh process (standard error is not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "statekit.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_explain_prints_the_classification_table_invariants_and_counts() -> None:
    done = statekit("explain", "machines/payment.yaml")
    assert done.returncode == 0, done.stderr
    assert "REJECTED PAYMENT_NOT_STARTED" in done.stdout
    assert "guard positive_amount" in done.stdout
    assert "runtime" in done.stdout  # the expression invariants
    assert "7 reachable configuration(s)" in done.stdout
    assert done.stderr == ""  # no progress bar when standard error is not a terminal


def test_explain_json_with_filters() -> None:
    done = statekit(
        "explain", "machines/task.yaml", "--state", "running", "--event", "TaskStarted",
        "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["chart"] == "task" and data["complete"] is True
    assert data["counts"]["configurations"] == 10
    for row in data["configurations"]:
        assert "lifecycle.running" in row["active"]
        assert [v["reason"] for v in row["events"]["TaskStarted"]] == ["TASK_ALREADY_RUNNING"]


def test_explain_usage_errors_exit_2() -> None:
    assert statekit("explain", "machines/task.yaml", "--event", "Nope").returncode == 2
    assert statekit("explain", "machines/task.yaml", "--state", "nowhere").returncode == 2
    assert statekit("explain", "machines/task.yaml", "--max-configurations", "0").returncode == 2


def test_explain_of_a_broken_chart_exits_1() -> None:
    done = statekit("explain", str(FIXTURES / "unknown-state.yaml"))
    assert done.returncode == 1
    assert "error[unknown-state]" in done.stderr


def test_paths_json_covers_every_transition() -> None:
    done = statekit("paths", "machines/task.yaml", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    coverage = data["coverage"]
    assert coverage["transitions"] == coverage["transitions_total"] == 14
    assert coverage["never_selected"] == []
    covered = {r["reason"] for p in data["paths"] for r in p["covers"]["rejections"]}
    assert {"STALE_ATTEMPT", "TASK_ALREADY_RUNNING", "ATTEMPT_OUT_OF_ORDER"} <= covered
    first = data["paths"][0]["steps"][0]
    assert first["event"] is None and first["status"] == "APPLIED"


def test_paths_text() -> None:
    done = statekit("paths", "machines/media_player.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("path 1 (")
    assert "29 of 29 transition(s) fired" in done.stdout


def test_lint_max_configurations_reports_an_incomplete_analysis(tmp_path: Path) -> None:
    (tmp_path / "grid.yaml").write_text(GRID, encoding="utf-8")
    assert statekit("lint", "grid.yaml", cwd=tmp_path).returncode == 0
    done = statekit("lint", "grid.yaml", "--max-configurations", "2", cwd=tmp_path)
    assert done.returncode == 1
    assert "error[analysis-limit]" in done.stdout
    assert "stopped at 2 abstract states" in done.stdout


def test_no_progress_bar_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with terminal_progress(chart_of_machine("task")) as progress:
        assert progress is None

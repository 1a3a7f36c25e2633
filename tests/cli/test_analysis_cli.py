"""`statekit explain`, `statekit paths` and `lint --max-configurations` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from chart_helpers import toggling_regions_yaml
from cli_process import statekit as run_statekit

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


def statekit(
    *args: str, cwd: Path = ROOT, columns: int | None = None
) -> subprocess.CompletedProcess[str]:
    """`cli_process.statekit` (standard error is not a terminal); `columns` sets the width
    the text tables are laid out for."""
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    return run_statekit(*args, cwd=cwd, env=env)


def test_explain_prints_the_classification_table_invariants_and_counts() -> None:
    done = statekit("explain", "machines/payment.yaml", columns=160)  # no cell wraps
    assert done.returncode == 0, done.stderr
    assert "REJECTED PAYMENT_NOT_STARTED" in done.stdout
    assert "after(15m)@processing" in done.stdout  # the timer's row, where it is armed
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
    assert data["counts"]["configurations"] == 17
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
    assert coverage["transitions"] == coverage["transitions_total"] == 22
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


ORDER = ROOT / "tests" / "charts" / "order.yaml"


def _table_rows(stdout: str) -> list[list[str]]:
    lines = [line for line in stdout.splitlines() if line.startswith("| ")]
    assert lines[0] == "| event | answer | configurations | where | for example |"
    rows = []
    for line in lines[1:]:
        if line.startswith(("| timer |", "| invariant |")):  # the tables after it
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def _short(states: list[str], verdict: dict[str, object]) -> str:
    """What the table shows for one verdict (an APPLIED one: the leaves it enters)."""
    if "target" in verdict:
        target = verdict["target"]
        assert isinstance(target, list)
        entered = [s for s in target if s not in states]
        text = "→ " + (", ".join(entered) if entered else "(unchanged)")
    else:
        text = str(verdict["status"])
        if verdict["reason"] is not None:
            text += f" {verdict['reason']}"
    assuming = verdict["assuming"]
    assert isinstance(assuming, list)
    if assuming:
        text += " assuming " + "; ".join(assuming)
    return text


@pytest.mark.parametrize(
    "chart",
    [ORDER, ROOT / "machines" / "task.yaml", ROOT / "machines" / "media_player.yaml",
     ROOT / "machines" / "payment.yaml"],
    ids=lambda p: p.stem,
)  # fmt: skip
def test_explain_table_groups_exactly_the_answers_of_the_full_table(chart: Path) -> None:
    table = statekit("explain", str(chart), "--table")
    assert table.returncode == 0, table.stderr
    full = json.loads(statekit("explain", str(chart), "--format", "json").stdout)
    expected: dict[tuple[str, str], int] = {}
    for row in full["configurations"]:
        for event, verdicts in row["events"].items():
            key = (event, "; ".join(_short(row["states"], v) for v in verdicts))
            expected[key] = expected.get(key, 0) + 1
    found: dict[tuple[str, str], int] = {}
    for event, answer, count, where, example in _table_rows(table.stdout):
        key = (event, answer.replace("\\|", "|"))
        assert key not in found, key  # one row per event and answer
        found[key] = int(count.split(" of ")[0])
        if where != "(any)":
            assert set(where.split(", ")) <= {
                s for row in full["configurations"] for s in row["active"]
            }
        assert example
    assert found == expected


def test_explain_table_of_the_five_region_chart_is_short() -> None:
    text = statekit("explain", str(ORDER))
    table = statekit("explain", str(ORDER), "--format", "table")
    assert text.returncode == table.returncode == 0
    text_lines, table_lines = len(text.stdout.splitlines()), len(table.stdout.splitlines())
    assert text_lines > 1000 and table_lines < 60, (text_lines, table_lines)
    rows = _table_rows(table.stdout)
    configurations = json.loads(statekit("explain", str(ORDER), "--format", "json").stdout)[
        "counts"
    ]["configurations"]
    for event in ("PAY_START", "SHIP", "SMS_SENT"):
        counts = [int(r[2].split(" of ")[0]) for r in rows if r[0] == event]
        assert sum(counts) == configurations, event
    assert ["SMS_SENT", "REJECTED UNDEFINED_TRANSITION"] in [r[:2] for r in rows]


def test_explain_table_excludes_json() -> None:
    done = statekit("explain", str(ORDER), "--table", "--format", "json")
    assert done.returncode == 2
    assert "--table" in done.stderr


def test_explain_table_with_filters() -> None:
    done = statekit("explain", str(ORDER), "--table", "--event", "SMS_SENT", "--state", "idle")
    assert done.returncode == 0, done.stderr
    rows = _table_rows(done.stdout)
    assert [(r[0], r[1]) for r in rows] == [("SMS_SENT", "REJECTED UNDEFINED_TRANSITION")]
    assert rows[0][3] == "(any)"  # notification.idle is active in every row shown


def test_docs_pages_of_charts_with_regions_show_the_answers_as_explain_does(
    tmp_path: Path,
) -> None:
    charts = tmp_path / "charts"
    charts.mkdir()
    for source in (ORDER, ROOT / "machines" / "payment.yaml"):
        (charts / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "docs"
    done = statekit("docs", str(charts), "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = (out / "order.md").read_text(encoding="utf-8")
    section = page.split("### Answers across regions", 1)[1].split("\n## ", 1)[0]
    table = statekit("explain", str(ORDER), "--table")
    assert _table_rows(section) == _table_rows(table.stdout)
    assert "### Answers across regions" not in (out / "payment.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("regions", [10, 11, 12])
def test_explain_text_of_more_configurations_than_it_lists_prints_the_grouped_table(
    tmp_path: Path, regions: int
) -> None:
    """1,024 configurations are listed one by one; 2,048 and 4,096 are more than the text
    format lists (2,000), so it says so and prints the grouped answers of `--table`."""
    chart = tmp_path / "toggles.yaml"
    chart.write_text(toggling_regions_yaml(regions, "toggles"), encoding="utf-8")
    text = statekit("explain", str(chart))
    table = statekit("explain", str(chart), "--table")
    assert text.returncode == table.returncode == 0, text.stderr
    grouped = _table_rows(table.stdout)
    assert len(grouped) == 2 * regions  # per event: to b where a is active, and back
    if 2**regions <= 2000:
        assert "configurations are more than" not in text.stdout
        assert len(text.stdout.splitlines()) > 2**regions * regions
    else:
        first = text.stdout.splitlines()[0]
        assert first.startswith(f"{2**regions:,} configurations are more than the text format")
        assert _table_rows(text.stdout) == grouped

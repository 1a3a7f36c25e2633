"""`statekit lint`, `compile`, `schema`, `rules` as a user runs them: output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "lint" / "fixtures" / "rules"
SARIF_SCHEMA = ROOT / "tests" / "lint" / "sarif-schema-2.1.0.json"


def statekit(
    *args: str, cwd: Path = ROOT, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real command in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "statekit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
    )


def test_reference_machines_are_lint_clean() -> None:
    done = statekit("lint", "machines/")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert "0 error(s), 0 warning(s)" in done.stderr


def test_text_findings_exit_1_with_positions() -> None:
    done = statekit("lint", str(FIXTURES / "unknown-state.yaml"))
    assert done.returncode == 1
    first = done.stdout.splitlines()[0]
    assert first.endswith("unknown-state.yaml:6:19: error[unknown-state] unknown state 'bussy'")
    assert "    did you mean 'busy'?" in done.stdout


def test_warnings_alone_exit_0() -> None:
    done = statekit("lint", str(FIXTURES / "unused-event.yaml"))
    assert done.returncode == 0
    assert "warning[unused-event]" in done.stdout


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("statechart: a\ninitial: x\nstates: {x: {final: true}}\n")
    (tmp_path / "b.yml").write_text("statechart: [\n")
    (tmp_path / "c.yaml").write_text("statechart: c\ninitial: x\nstates: {x: {on: {GO: x}}}\n")
    (tmp_path / "notes.txt").write_text("not a chart")
    done = statekit("lint", str(tmp_path), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    files = sorted({Path(d["file"]).name for d in report["diagnostics"]})
    assert files == ["b.yml", "c.yaml"]
    assert report["summary"] == {"error": 2, "warning": 0}


def test_sarif_output_is_valid_sarif() -> None:
    done = statekit("lint", "--format", "sarif", str(FIXTURES))
    assert done.returncode == 1
    sarif = json.loads(done.stdout)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert len(results) >= len(list(FIXTURES.glob("*.yaml")))
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in results)


def test_github_annotations() -> None:
    done = statekit("lint", "--format", "github", str(FIXTURES / "unknown-guard.yaml"))
    assert done.returncode == 1
    assert done.stdout.startswith("::error file=")
    assert ",line=7,col=37," in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("lint", "no/such/path.yaml"),
        ("lint",),
        ("lint", "--format", "xml", "machines/"),
        ("compile",),
        ("rules", "no-such-rule"),
        ("frobnicate",),
    ],
)
def test_usage_errors_exit_2_without_traceback(args: tuple[str, ...]) -> None:
    done = statekit(*args)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "contents",
    [
        {},
        {"notes.txt": "not a chart\n"},
        {"ci.yml": "on: push\njobs: {}\n", "values.yaml": "statechart_like: 1\n"},
        {"nested/deeper/list.yaml": "- statechart: no\n"},
    ],
    ids=["empty", "text-only", "yaml-not-charts", "nested-list"],
)
def test_a_folder_without_charts_warns_and_exits_0(
    tmp_path: Path, contents: dict[str, str]
) -> None:
    (tmp_path / "charts").mkdir()
    for name, text in contents.items():
        (tmp_path / "charts" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "charts" / name).write_text(text)
    done = statekit("lint", "charts", cwd=tmp_path)
    assert done.returncode == 0, done
    assert done.stdout == ""
    assert "warning: charts: no charts in this folder" in done.stderr
    assert "Traceback" not in done.stderr
    quiet = statekit("lint", "-q", "charts", cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_bad_project_configuration_exits_2(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.statekit.lint]\nignore = ["nope"]\n')
    (tmp_path / "c.yaml").write_text("statechart: c\ninitial: x\nstates: {x: {}}\n")
    done = statekit("lint", "c.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown rule 'nope'" in done.stderr


def test_compile_writes_stable_sorted_json(tmp_path: Path) -> None:
    out = tmp_path / "payment.json"
    done = statekit("compile", "machines/payment.yaml", "-o", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["statechart"] == "payment"
    assert data["digest"].startswith("sha256:")
    again = statekit("compile", "machines/payment.yaml")
    assert again.stdout == out.read_text()
    assert list(data) == sorted(data)


def test_compile_of_a_broken_chart_prints_diagnostics_and_exits_1() -> None:
    done = statekit("compile", str(FIXTURES / "unknown-state.yaml"))
    assert done.returncode == 1
    assert "error[unknown-state]" in done.stderr and done.stdout == ""


def test_schema_command_prints_the_packaged_schema() -> None:
    done = statekit("schema")
    assert done.returncode == 0
    schema = json.loads(done.stdout)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    packaged = ROOT / "statekit" / "schema" / "statechart.schema.json"
    assert json.loads(packaged.read_text()) == schema


def test_rules_lists_and_documents() -> None:
    listing = statekit("rules")
    assert listing.returncode == 0 and "unused-guard" in listing.stdout
    doc = statekit("rules", "expression-unsafe")
    assert "Failing::" in doc.stdout


def test_docs_rules_md_is_the_rules_markdown() -> None:
    done = statekit("rules", "--markdown")
    assert done.returncode == 0
    written = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert done.stdout == written, "run `statekit rules --markdown > docs/rules.md`"

"""`statekit lint`, `compile`, `schema`, `rules` as a user runs them: output and exit codes."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_process import statekit

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "lint" / "fixtures" / "rules"
SARIF_SCHEMA = ROOT / "tests" / "lint" / "sarif-schema-2.1.0.json"


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
    assert report["summary"] == {"error": 2, "warning": 0, "info": 0}


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
        ("lint", "--stdin-filename", "c.yaml", "machines/"),
        ("lint", "--select"),
        ("lint", "--base-dir", "machines/payment.yaml", "machines/"),
        ("lint", "--output-file", "machines", "machines/"),
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


# -- standard input, output, rule selection -----------------------------------

BROKEN_TARGET = FIXTURES / "unknown-state.yaml"


def test_stdin_is_linted_under_the_stdin_filename() -> None:
    text = BROKEN_TARGET.read_text()
    done = statekit("lint", "-", "--stdin-filename", "charts/door.yaml", stdin=text)
    assert done.returncode == 1, done
    assert done.stdout.splitlines()[0] == (
        "charts/door.yaml:6:19: error[unknown-state] unknown state 'bussy'"
    )
    plain = statekit("lint", "-", stdin=text)
    assert plain.stdout.startswith("<stdin>:6:19: error[unknown-state]")
    assert "1 file(s): 1 error(s)" in plain.stderr


@pytest.mark.parametrize(
    ("stdin", "slug"),
    [
        ("", "schema"),
        ("statechart: [\n", "yaml-syntax"),
        ("- a list\n", "schema"),
        ("on: push\n", "schema"),
        ("\x00\x01\x02 binary", "yaml-syntax"),
        ("a: &x [*x]\n", "yaml-syntax"),
        ("statechart: c\n" + "#" * (4 << 20), "yaml-limits"),
    ],
    ids=["empty", "broken", "list", "not-a-chart", "binary", "recursive-alias", "oversized"],
)
def test_hostile_stdin_is_a_positioned_finding(stdin: str, slug: str) -> None:
    done = statekit("lint", "-", "--stdin-filename", "in.yaml", "--format", "json", stdin=stdin)
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    findings = json.loads(done.stdout)["diagnostics"]
    assert findings and all(d["file"] == "in.yaml" for d in findings)
    assert slug in {d["slug"] for d in findings}, findings


def test_stdin_takes_the_configuration_of_its_filename(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "pyproject.toml").write_text(
        '[tool.statekit.lint]\nignore = ["unused-event"]\n'
    )
    chart = (FIXTURES / "unused-event.yaml").read_text()
    here = statekit("lint", "-", "--stdin-filename", "c.yaml", cwd=tmp_path, stdin=chart)
    assert "warning[unused-event]" in here.stdout
    there = statekit("lint", "-", "--stdin-filename", "project/c.yaml", cwd=tmp_path, stdin=chart)
    assert there.returncode == 0 and "unused-event" not in there.stdout


def test_stdin_and_files_together() -> None:
    done = statekit(
        "lint", str(FIXTURES / "unused-event.yaml"), "-", stdin=BROKEN_TARGET.read_text()
    )
    assert done.returncode == 1
    assert "<stdin>:6:19: error[unknown-state]" in done.stdout
    assert "warning[unused-event]" in done.stdout
    assert "2 file(s)" in done.stderr


def test_quiet_prints_findings_only() -> None:
    done = statekit("lint", "--quiet", str(BROKEN_TARGET))
    assert done.returncode == 1
    assert "error[unknown-state]" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_output_file_gets_what_stdout_would(tmp_path: Path, output_format: str) -> None:
    out = tmp_path / "report.out"
    done = statekit("lint", "--format", output_format, "-o", str(out), str(BROKEN_TARGET), cwd=ROOT)
    assert done.returncode == 1 and done.stdout == ""
    assert "1 file(s): 1 error(s)" in done.stderr
    assert (
        out.read_text(encoding="utf-8")
        == statekit("lint", "--format", output_format, str(BROKEN_TARGET)).stdout
    )


def test_an_unwritable_output_file_is_a_usage_error(tmp_path: Path) -> None:
    done = statekit("lint", "-o", str(tmp_path / "no" / "such" / "dir.txt"), str(BROKEN_TARGET))
    assert done.returncode == 2
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "slugs"),
    [
        ((), {"unused-event", "unused-guard"}),
        (("--select", "unused-event"), {"unused-event"}),
        (("--select", "unused-guard,unused-event"), {"unused-event", "unused-guard"}),
        (("--select", "unused-guard", "--select", "dead-state"), {"unused-guard"}),
        (("--ignore", "unused-event"), {"unused-guard"}),
        (("--ignore", "unused-event, unused-guard"), set()),
        (("--select", "unused-event", "--ignore", "unused-event"), set()),
    ],
)
def test_select_and_ignore_on_the_command_line(
    tmp_path: Path, args: tuple[str, ...], slugs: set[str]
) -> None:
    (tmp_path / "c.yaml").write_text(
        "statechart: c\nevents: {GO: {}, SPARE: {}}\nguards: {never: 'false'}\n"
        "initial: a\nstates:\n  a: {on: {GO: a}}\n"
    )
    done = statekit("lint", "--format", "json", *args, "c.yaml", cwd=tmp_path)
    assert done.returncode == 0, done
    assert {d["slug"] for d in json.loads(done.stdout)["diagnostics"]} == slugs


def test_select_never_hides_compile_errors() -> None:
    done = statekit("lint", "--select", "unused-event", str(BROKEN_TARGET))
    assert done.returncode == 1 and "error[unknown-state]" in done.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--select", "unused-evnt"), "unknown rule 'unused-evnt'"),
        (("--ignore", "no-such-rule"), "unknown rule 'no-such-rule'"),
        (("--ignore", "unused-event,nope"), "unknown rule 'nope'"),
        (("--ignore", "schema"), "rule 'schema' cannot be configured"),
        (("--select", "UNUSED-EVENT"), "unknown rule 'UNUSED-EVENT'"),
    ],
)
def test_unknown_rules_on_the_command_line_are_usage_errors(
    args: tuple[str, ...], needle: str
) -> None:
    done = statekit("lint", *args, str(BROKEN_TARGET))
    assert done.returncode == 2, done
    assert needle in done.stderr
    assert "Traceback" not in done.stderr


# -- python -m statekit and shell completion ----------------------------------


@pytest.mark.parametrize("module", ["statekit", "statekit.cli"])
def test_python_dash_m_runs_the_command_line(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.startswith("statekit, version ")


def complete(words: str, shell: str = "bash") -> list[str]:
    """What click's completion answers for the command line `words` (cursor at the end)."""
    env = {
        **os.environ,
        "_STATEKIT_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    done = subprocess.run(
        [sys.executable, "-m", "statekit"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("statekit lint --select unused-", ["plain,unused-event", "plain,unused-guard"]),
        ("statekit lint --ignore unreachable-s", ["plain,unreachable-state"]),
        (
            "statekit lint --select dead-state,unused-",
            ["plain,dead-state,unused-event", "plain,dead-state,unused-guard"],
        ),
        ("statekit lint --select zzz", []),
    ],
)
def test_rule_names_complete_for_select_and_ignore(words: str, expected: list[str]) -> None:
    assert complete(words) == expected


def test_every_rule_completes_after_select() -> None:
    from statekit.lint.registry import RULES

    got = complete("statekit lint --select ")
    assert got == [f"plain,{slug}" for slug in sorted(RULES)]


def test_commands_complete() -> None:
    assert "plain,lint" in complete("statekit li")


# -- CI formats in a repository -----------------------------------------------


def sarif_uris(log: dict[str, Any]) -> list[str]:
    return [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    ]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository (a `.git` folder is all the formats look for) with a chart in a subfolder."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "charts" / "orders").mkdir(parents=True)
    (root / "charts" / "orders" / "door.yaml").write_text(BROKEN_TARGET.read_text())
    return root


@pytest.mark.parametrize(
    ("cwd", "path"),
    [
        (".", "charts/orders/door.yaml"),
        ("charts", "orders/door.yaml"),
        ("charts/orders", "door.yaml"),
        ("charts/orders", "../orders/./door.yaml"),
        ("charts", "{root}/charts/orders/door.yaml"),
    ],
)
def test_sarif_and_github_paths_are_relative_to_the_repository_root(
    repository: Path, cwd: str, path: str
) -> None:
    here = repository / cwd
    path = path.format(root=repository)
    done = statekit("lint", "--format", "sarif", path, cwd=here)
    log = json.loads(done.stdout)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    assert set(sarif_uris(log)) == {"charts/orders/door.yaml"}
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repository.as_uri() + "/"}}
    github = statekit("lint", "--format", "github", path, cwd=here)
    assert github.stdout.startswith("::error file=charts/orders/door.yaml,line=6,")


def test_base_dir_overrides_the_repository_root(repository: Path) -> None:
    done = statekit(
        "lint",
        "--format",
        "sarif",
        "--base-dir",
        "charts",
        "charts/orders/door.yaml",
        cwd=repository,
    )
    log = json.loads(done.stdout)
    assert set(sarif_uris(log)) == {"orders/door.yaml"}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/repo/charts/")
    github = statekit(
        "lint",
        "--format",
        "github",
        "--base-dir",
        "charts",
        "charts/orders/door.yaml",
        cwd=repository,
    )
    assert github.stdout.startswith("::error file=orders/door.yaml,")


def test_a_worktree_or_submodule_git_file_marks_the_root(repository: Path) -> None:
    (repository / ".git").rmdir()
    (repository / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    done = statekit("lint", "--format", "sarif", "orders/door.yaml", cwd=repository / "charts")
    assert set(sarif_uris(json.loads(done.stdout))) == {"charts/orders/door.yaml"}


def generated_chart(states: int, events: int) -> str:
    """A chain of `states` states, each answering one of `events` events: the rest are
    undefined pairs (`events - 1` per state)."""
    lines = ["statechart: generated", "events:"]
    lines += [f"  E{j}: {{}}" for j in range(events)]
    lines += ["initial: s0", "states:"]
    for i in range(states):
        following = f"s{i + 1}" if i + 1 < states else "done"
        lines.append(f"  s{i}: {{on: {{E{i % events}: {following}}}}}")
    lines.append("  done: {final: true}")
    return "\n".join(lines) + "\n"


def test_sarif_of_a_1000_state_chart_is_within_githubs_limits(tmp_path: Path) -> None:
    """GitHub code scanning: at most 25,000 results per run, 1,000 locations per result,
    25,000 rules per run, 20 runs per file, 10 MB gzipped."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "big.yaml").write_text(generated_chart(1_000, 3))
    out = tmp_path / "lint.sarif"
    done = statekit("lint", "--format", "sarif", "-o", str(out), "big.yaml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    text = out.read_text(encoding="utf-8")
    log = json.loads(text)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    assert len(log["runs"]) <= 20
    (run,) = log["runs"]
    results = run["results"]
    assert len(results) <= 25_000
    assert len(run["tool"]["driver"]["rules"]) <= 25_000
    for result in results:
        assert len(result["locations"]) + len(result.get("relatedLocations", [])) <= 1_000
    per_rule: dict[str, int] = {}
    for result in results:
        per_rule[result["ruleId"]] = per_rule.get(result["ruleId"], 0) + 1
    assert max(per_rule.values()) <= 1_001
    left_out = [r for r in results if "left out of this SARIF log" in r["message"]["text"]]
    for note in left_out:
        assert re.match(r"[\d,]+ more [a-z-]+ finding\(s\) left out", note["message"]["text"])
    assert len(gzip.compress(text.encode("utf-8"))) <= 10 * 1024 * 1024
    assert set(sarif_uris(log)) == {"big.yaml"}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_documented_completion_scripts_exist(shell: str) -> None:
    env = {**os.environ, "_STATEKIT_COMPLETE": f"{shell}_source"}
    done = subprocess.run(
        [sys.executable, "-m", "statekit"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "_STATEKIT_COMPLETE" in done.stdout
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"_STATEKIT_COMPLETE={shell}_source statekit" in readme


def test_zsh_completion_describes_each_rule() -> None:
    lines = complete("statekit lint --ignore unused-g", shell="zsh")
    assert lines == ["plain", "unused-guard", "a declared guard that no transition uses."]

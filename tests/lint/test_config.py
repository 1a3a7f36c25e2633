"""Per-rule configuration from pyproject.toml and from the chart's `lint:` key."""

from __future__ import annotations

from pathlib import Path

import pytest

from statekit.compiler.diagnostics import Severity
from statekit.lint.config import (
    ConfigError,
    Exclude,
    LintConfig,
    find_pyproject,
    load_project_config,
)
from statekit.lint.lint_files import lint_paths

CHART = """\
statechart: c
events: {GO: {}, SPARE: {}}
guards: {never: "false"}
initial: a
states:
  a: {on: {GO: a}}
"""


def _write(tmp_path: Path, chart: str, pyproject: str | None = None) -> Path:
    (tmp_path / "c.yaml").write_text(chart, encoding="utf-8")
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return tmp_path / "c.yaml"


def test_defaults_report_unused_event_and_guard_as_warnings(tmp_path: Path) -> None:
    report = lint_paths([_write(tmp_path, CHART)], LintConfig())
    assert [(d.slug, d.severity) for d in report.diagnostics] == [
        ("unused-event", Severity.WARNING),
        ("unused-guard", Severity.WARNING),
    ]
    assert not report.has_errors


def test_pyproject_ignores_and_raises_severity(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        CHART,
        '[tool.statekit.lint]\nignore = ["unused-event"]\nseverity = {unused-guard = "error"}\n',
    )
    config = load_project_config(find_pyproject(tmp_path))
    report = lint_paths([path], config)
    assert [(d.slug, d.severity) for d in report.diagnostics] == [("unused-guard", Severity.ERROR)]
    assert report.has_errors


def test_chart_lint_key_overrides_the_project(tmp_path: Path) -> None:
    chart = CHART + "lint:\n  ignore: [unused-guard]\n  severity: {unused-event: 'off'}\n"
    report = lint_paths([_write(tmp_path, chart)], LintConfig())
    assert report.diagnostics == ()


def test_chart_lint_key_with_an_unknown_rule_is_a_positioned_error(tmp_path: Path) -> None:
    chart = CHART + "lint:\n  ignore: [unused-gaurd]\n"
    report = lint_paths([_write(tmp_path, chart)], LintConfig())
    problem = [d for d in report.diagnostics if d.slug == "schema"]
    assert len(problem) == 1 and "unknown rule 'unused-gaurd'" in problem[0].message
    assert (problem[0].span.line, problem[0].span.column) == (8, 12)


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('ignore = ["no-such-rule"]', "unknown rule 'no-such-rule'"),
        ('ignore = ["schema"]', "cannot be configured"),
        ('severity = {unused-event = "fatal"}', "must be error, warning or off"),
        ('colour = "red"', "unknown key(s)"),
        ('ignore = "unused-event"', "must be a list"),
        ('exclude = "build/"', "exclude must be a list of gitignore patterns"),
        ("exclude = [1]", "exclude must be a list of gitignore patterns"),
        ('select = ["unused-event"]', "select (allowed: exclude, ignore, severity)"),
    ],
)
def test_bad_project_configuration_is_a_usage_error(
    tmp_path: Path, table: str, needle: str
) -> None:
    _write(tmp_path, CHART, f"[tool.statekit.lint]\n{table}\n")
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        load_project_config(tmp_path / "pyproject.toml")


def test_no_table_means_defaults(tmp_path: Path) -> None:
    _write(tmp_path, CHART, "[project]\nname = 'x'\n")
    assert load_project_config(tmp_path / "pyproject.toml") == LintConfig()


def test_folders_yield_charts_whatever_the_suffix_case(tmp_path: Path) -> None:
    (tmp_path / "upper.YAML").write_text(CHART, encoding="utf-8")
    (tmp_path / "lower.yml").write_text(CHART, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("no chart", encoding="utf-8")
    report = lint_paths([tmp_path], LintConfig())
    assert sorted(Path(f).name for f in report.files) == ["lower.yml", "upper.YAML"]


def test_exclude_patterns_are_relative_to_the_pyproject_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.statekit.lint]\nexclude = ["/charts/old/"]\n')
    for name in ("charts/old/a.yaml", "charts/new/old/b.yaml", "charts/c.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(CHART, encoding="utf-8")
    config = load_project_config(find_pyproject(tmp_path / "charts"))
    assert config.exclude == (Exclude(base=tmp_path.absolute(), patterns=("/charts/old/",)),)
    monkeypatch.chdir(tmp_path / "charts")
    report = lint_paths(["."], config)
    assert sorted(Path(f).as_posix() for f in report.files) == ["c.yaml", "new/old/b.yaml"]


def test_command_line_adds_ignores_and_exclude_and_replaces_select(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    project = LintConfig(ignore=frozenset({"unused-guard"}))
    config = project.with_command_line(
        select=["unused-event"], ignore=["dead-state"], exclude=["gen/"]
    )
    assert config.ignore == {"unused-guard", "dead-state"}
    assert config.select == frozenset({"unused-event"})
    assert config.exclude == (Exclude(base=tmp_path.absolute(), patterns=("gen/",)),)
    assert project.with_command_line() == project
    assert config.runs("unused-event") and not config.runs("unused-guard")
    assert not config.runs("dead-state") and not config.runs("no-final-path")
    assert config.runs("unknown-state")  # compile rules always report


@pytest.mark.parametrize(
    ("select", "ignore", "needle"),
    [
        (["nope"], [], "unknown rule 'nope'"),
        ([], ["nope"], "unknown rule 'nope'"),
        ([], ["yaml-syntax"], "cannot be configured"),
        (["unused-event", "x"], ["y"], "unknown rule 'y'"),
    ],
)
def test_command_line_rules_are_validated(
    select: list[str], ignore: list[str], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle):
        LintConfig().with_command_line(select=select, ignore=ignore)

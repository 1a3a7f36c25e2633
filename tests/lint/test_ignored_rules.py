"""A chart rule that is switched off is not run at all: every way of switching it off, for
every chart rule, is tried with the rule's check replaced by one that records its calls."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from statekit.analysis.facts import ChartFacts
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
from statekit.lint import lint_files
from statekit.lint.config import LintConfig
from statekit.lint.registry import RULES, Check

CHART = """\
statechart: c
events: {GO: {}, BACK: {}, SPARE: {}}
initial: a
states:
  a: {on: {GO: b}}
  b: {on: {BACK: a}}
"""
CHART_RULES = sorted(slug for slug, rule in RULES.items() if rule.check is not None)
OTHER = "unused-event"

Way = Callable[[str], tuple[LintConfig, str]]
"""A way of switching rule `slug` off: the project configuration and the chart's `lint:`."""
WAYS: dict[str, Way] = {
    "ignore": lambda slug: (LintConfig(ignore=frozenset({slug})), ""),
    "--ignore": lambda slug: (LintConfig().with_command_line(ignore=[slug]), ""),
    "--select another": lambda slug: (
        LintConfig().with_command_line(select=[OTHER if slug != OTHER else "unused-guard"]),
        "",
    ),
    "severity off": lambda slug: (LintConfig(severity={slug: Severity.OFF}), ""),
    "chart lint: ignore": lambda slug: (LintConfig(), f"lint:\n  ignore: [{slug}]\n"),
    "chart lint: severity off": lambda slug: (
        LintConfig(),
        f"lint:\n  severity: {{{slug}: 'off'}}\n",
    ),
}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every chart rule's check, wrapped to record the slug of each call."""
    made: list[str] = []

    def recording(slug: str, check: Check) -> Check:
        def run(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
            made.append(slug)
            return check(chart, facts)

        return run

    wrapped = {
        slug: replace(rule, check=recording(slug, rule.check)) if rule.check else rule
        for slug, rule in RULES.items()
    }
    monkeypatch.setattr(lint_files, "RULES", MappingProxyType(wrapped))
    return made


def _lint(tmp_path: Path, config: LintConfig, chart_lint: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CHART + chart_lint, encoding="utf-8")
    report = lint_files.lint_paths([path], config)
    assert report.internal_errors == 0
    assert not any(d.slug == "schema" for d in report.diagnostics), report.diagnostics


def test_with_nothing_switched_off_every_chart_rule_runs_once(
    calls: list[str], tmp_path: Path
) -> None:
    _lint(tmp_path, LintConfig(), "")
    assert sorted(calls) == CHART_RULES


@pytest.mark.parametrize("way", list(WAYS.values()), ids=list(WAYS))
@pytest.mark.parametrize("slug", CHART_RULES)
def test_a_rule_switched_off_is_not_run(
    calls: list[str], tmp_path: Path, slug: str, way: Way
) -> None:
    config, chart_lint = way(slug)
    _lint(tmp_path, config, chart_lint)
    assert slug not in calls
    assert calls, "the other rules still run"

"""Helpers of the analysis tests: compile inline charts, explore them, lint them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from statekit.analysis.exploration import Exploration
from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS, explore
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_file

ROOT = Path(__file__).resolve().parents[2]
MACHINES = ROOT / "machines"
ANALYSIS_SLUGS = frozenset(
    {
        "unreachable-state",
        "dead-state",
        "no-final-path",
        "undefined-pair",
        "shadowed-reject",
        "region-reset",
        "shadowed-transition",
        "conflicting-transitions",
        "invariant-violation",
        "unreachable-transition",
        "undecided-race",
        "stale-race-decision",
        "analysis-limit",
        "transient-timer",
    }
)


def chart_of(text: str, file: str = "chart.yaml") -> CompiledChart:
    """Compile dedented YAML text that must have no errors."""
    result = compile_source(textwrap.dedent(text).lstrip("\n"), file)
    assert result.chart is not None, [f"{d.span} {d.message}" for d in result.diagnostics]
    return result.chart


def explored(text: str, max_configurations: int = DEFAULT_MAX_CONFIGURATIONS) -> Exploration:
    """Explore an inline chart."""
    return explore(chart_of(text), max_configurations=max_configurations)


def findings(
    tmp_path: Path,
    text: str,
    slug: str | None = None,
    max_configurations: int = DEFAULT_MAX_CONFIGURATIONS,
) -> list[Diagnostic]:
    """Lint an inline chart written to a file; only analysis findings (or one slug)."""
    path = tmp_path / "chart.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    wanted = {slug} if slug is not None else ANALYSIS_SLUGS
    options = ExplorationOptions(max_configurations=max_configurations)
    return [d for d in lint_file(path, LintConfig(), options) if d.slug in wanted]

"""The two stages of the language server's diagnostics, as pure functions run in worker threads.

`check_stage` checks a text by every compiler pass that reports and applies the
project's and the chart's lint settings (the findings the server publishes first);
`freeze_stage` then makes the compiled chart; `analysis_stage` runs every chart
rule as `statekit lint` does (the family rules with the charts of the file's
folder as the chart set). A bug in statekit becomes an `internal-error`
finding at the top of the file, never a dead server.
"""

from __future__ import annotations

from pathlib import Path

from statekit.analysis.options import ExplorationOptions
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.pipeline import CheckedSource, CompileResult, check_source
from statekit.lint.config import (
    ConfigError,
    LintConfig,
    find_pyproject,
    load_project_config,
    with_chart_settings,
)
from statekit.lint.lint_files import lint_compiled, neighbour_set


class Superseded(Exception):
    """A newer edit of the document: the analysis of the older text stops."""


def check_stage(
    text: str, file: str
) -> tuple[CheckedSource, LintConfig, tuple[Diagnostic, ...], tuple[Diagnostic, ...]]:
    """Check `text` by every compiler pass that reports (`check_source`): the checked
    source, the project configuration and its problems, and the compile findings with
    the project's and the chart's settings applied, ready to publish before the IR is
    frozen (`freeze_stage`)."""
    config, problems = _project_config(file)
    try:
        checked = check_source(text, file)
    except Exception as exc:  # a bug in statekit: a positioned finding, never a dead server
        crash = _crash(file, exc)
        return CheckedSource(None, (crash,), text), config, problems, (*problems, crash)
    found = [*problems, *checked.diagnostics]
    chart_config = config
    if checked.model is not None:
        chart_config, chart_problems = with_chart_settings(config, checked.model.lint, file)
        found.extend(chart_problems)
    kept = (chart_config.effective(d) for d in found)
    findings = tuple(sorted((d for d in kept if d is not None), key=Diagnostic.sort_key))
    return checked, config, problems, findings


def freeze_stage(checked: CheckedSource, file: str) -> tuple[CompileResult, Diagnostic | None]:
    """The compile result of a checked text, and the `internal-error` finding when
    freezing it crashed (then the result has no chart)."""
    try:
        return checked.frozen(), None
    except Exception as exc:  # a bug in statekit: a positioned finding, never a dead server
        crash = _crash(file, exc)
        return CompileResult(None, (*checked.diagnostics, crash), checked.source), crash


def analysis_stage(
    compiled: CompileResult,
    file: str,
    config: LintConfig,
    problems: tuple[Diagnostic, ...],
    options: ExplorationOptions,
) -> tuple[Diagnostic, ...]:
    """Every finding of the compiled chart, as `statekit lint` reports them; the charts
    in the file's folder (as saved) are the chart set its invokes and sends name."""
    try:
        chart_set = None
        if compiled.chart is not None:
            chart_set = neighbour_set(compiled.chart, (Path(file),))
        found = lint_compiled(compiled, file, config, options, chart_set)
    except Superseded:
        raise
    except Exception as exc:  # a bug in statekit: a positioned finding, never a dead server
        found = [*compiled.diagnostics, _crash(file, exc)]
    return tuple(sorted([*problems, *found], key=Diagnostic.sort_key))


def _project_config(file: str) -> tuple[LintConfig, tuple[Diagnostic, ...]]:
    """`[tool.statekit.lint]` of the nearest pyproject.toml; a broken one is a finding."""
    try:
        return load_project_config(find_pyproject(Path(file).absolute().parent)), ()
    except ConfigError as exc:
        return LintConfig(), (
            Diagnostic("config", Severity.ERROR, str(exc), SourceSpan.start_of(file)),
        )


def _crash(file: str, exc: Exception) -> Diagnostic:
    return Diagnostic(
        "internal-error",
        Severity.ERROR,
        f"statekit crashed on this file: {type(exc).__name__}: {exc}",
        SourceSpan.start_of(file),
        ("please report this",),
    )

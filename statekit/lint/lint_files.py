"""Lint files and folders: find the charts, compile each, run the chart rules, apply configuration.

Which files a folder walk lints is `statekit.lint.chart_walk`'s to say (its
public names are re-exported here). The charts linted together form the
*chart set* that the family rules (an invoke naming a chart, the types across
an invocation) read: `lint_paths` compiles every file first, then lints each
with the others in view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from statekit.analysis.facts import chart_facts
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.chart_set import ChartSet, named_charts, talks_to_charts
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CompileResult, compile_file, compile_source
from statekit.lint.chart_walk import (
    CHART_SUFFIXES,
    FileSelection,
    UsageError,
    collect_files,
    find_repository_root,
    is_chart_file,
    is_chart_text,
    select_files,
)
from statekit.lint.config import LintConfig, with_chart_settings
from statekit.lint.family_checks import FamilyView
from statekit.lint.registry import RULES
from statekit.lint.rules import invoke_output
from statekit.lint.uncompiled_family import output_findings

__all__ = [
    "CHART_SUFFIXES",
    "DEFAULT_OPTIONS",
    "FileSelection",
    "LintReport",
    "UsageError",
    "collect_files",
    "find_repository_root",
    "folder_charts",
    "is_chart_file",
    "is_chart_text",
    "lint_compiled",
    "lint_file",
    "lint_paths",
    "lint_source",
    "neighbour_set",
    "select_files",
]

DEFAULT_OPTIONS = ExplorationOptions()
"""Explorations with the default bound and no progress display."""


@dataclass(frozen=True, slots=True)
class LintReport:
    """Every diagnostic of every file, sorted; `internal_errors` counts crashes of statekit.

    `skipped` and `empty_folders` come from the folder walk (`FileSelection`).
    """

    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    internal_errors: int = 0
    skipped: int = 0
    empty_folders: tuple[str, ...] = field(default=())

    @property
    def has_errors(self) -> bool:
        """Whether any finding is at error severity."""
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for d in self.diagnostics if d.severity is severity)


def lint_file(
    path: Path,
    config: LintConfig,
    options: ExplorationOptions = DEFAULT_OPTIONS,
    chart_set: ChartSet | None = None,
) -> list[Diagnostic]:
    """All findings of one chart file, at their configured severities; the chart rules
    share one exploration, run with `options`. The family rules read `chart_set` (None:
    this chart and the charts in its folder, `neighbour_set`)."""
    result = compile_file(path)
    if chart_set is None:
        if result.chart is not None:
            return lint_compiled(
                result, str(path), config, options, neighbour_set(result.chart, (path,))
            )
        # compiled only if the chart that failed invokes: most broken charts do not
        return lint_compiled(result, str(path), config, options, _folder_set(path))
    return lint_compiled(result, str(path), config, options, chart_set)


def _linted_and_folders(
    charts: Sequence[CompiledChart], named_files: Sequence[Path]
) -> Callable[[], ChartSet]:
    """The charts linted together and those of the named files' folders, compiled when
    first asked for."""
    return lambda: ChartSet((*charts, *folder_charts(named_files)))


def _folder_set(path: Path) -> Callable[[], ChartSet]:
    """The charts of `path`'s folder as a set, compiled when first asked for."""
    return lambda: ChartSet(folder_charts((path,)))


def lint_source(
    source: bytes | str,
    file: str,
    config: LintConfig,
    options: ExplorationOptions = DEFAULT_OPTIONS,
    *,
    neighbours: bool = False,
) -> LintReport:
    """Lint chart text that has no file of its own (standard input), reported as `file`;
    the family rules see it alone, or with the charts of `file`'s folder when
    `neighbours` (an editor's buffer named by `--stdin-filename`)."""
    try:
        result = compile_source(source, file)
        chart_set: ChartSet | None = None
        if neighbours and result.chart is not None:
            chart_set = neighbour_set(result.chart, (Path(file),))
        found = lint_compiled(
            result,
            file,
            config,
            options,
            _folder_set(Path(file)) if neighbours and chart_set is None else chart_set,
        )
    except Exception as exc:  # a bug in statekit: a positioned finding, not a traceback
        return LintReport((file,), (_crash(file, exc),), 1)
    return LintReport((file,), tuple(sorted(found, key=Diagnostic.sort_key)))


def lint_compiled(
    result: CompileResult,
    file: str,
    config: LintConfig,
    options: ExplorationOptions,
    chart_set: ChartSet | Callable[[], ChartSet] | None = None,
) -> list[Diagnostic]:
    """All findings of an already compiled chart (the compile findings too), configured:
    the project's `config` with the chart's own `lint:` key layered over it. The family
    rules see the chart in `chart_set` (None: the chart alone); a chart that does not
    compile still has its invokes' `output:` checked against the set
    (`uncompiled_family`: the cause of a compile error may be there)."""
    findings = list(result.diagnostics)
    chart = result.chart
    if chart is None and chart_set is not None and config.reports(invoke_output.SLUG):
        findings.extend(output_findings(result, file, chart_set))
    if chart is not None:
        config, problems = with_chart_settings(config, chart.lint, file)
        findings.extend(problems)
        facts = chart_facts(chart, options)
        known = chart_set if isinstance(chart_set, ChartSet) else ChartSet((chart,))
        family = FamilyView(facts, known, result.source)
        talks = talks_to_charts(chart)  # else the family rules have nothing to check
        for rule in RULES.values():
            # a rule whose findings would all be dropped (ignored, not selected, or
            # `off`) is not run at all: its work (a rule may walk every outcome) is skipped
            if not config.reports(rule.info.slug):
                continue
            if rule.check is not None:
                findings.extend(rule.check(chart, facts))
            elif rule.family_check is not None and talks:
                findings.extend(rule.family_check(chart, family))
    kept = (config.effective(d) for d in findings)
    return [d for d in kept if d is not None]


def neighbour_set(
    chart: CompiledChart, files: Sequence[Path], linted: Sequence[CompiledChart] = ()
) -> ChartSet:
    """The chart set `chart` is linted in: `linted` (the charts linted together, `chart`
    among them or not) and, when an invoke or `send` of `chart` names a chart they do
    not have, the charts directly in the folders of `files` (the files named alone;
    compiled, not linted; `files` themselves are left out: they are `chart` or among
    `linted`)."""
    known = ChartSet((chart, *(c for c in linted if c is not chart)))
    if not files or all(known.resolve(name) is not None for name in named_charts(chart)):
        return known
    return ChartSet((*known.charts, *folder_charts(files)))


def folder_charts(files: Sequence[Path]) -> tuple[CompiledChart, ...]:
    """The charts directly in the folders of `files` (compiled, not linted; `files`
    themselves are left out)."""
    found: list[CompiledChart] = []
    named = {f.resolve() for f in files}
    for folder in dict.fromkeys(f.resolve().parent for f in files):
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for path in entries:
            if path in named or path.suffix.lower() not in CHART_SUFFIXES:
                continue
            if not path.is_file() or not is_chart_file(path):
                continue
            compiled = compile_file(path).chart
            if compiled is not None:
                found.append(compiled)
    return tuple(found)


def _crash(file: str, exc: Exception) -> Diagnostic:
    import traceback  # only a crash needs it: not paid at start-up

    where = traceback.extract_tb(exc.__traceback__)[-1]
    return Diagnostic(
        "internal-error",
        Severity.ERROR,
        f"statekit crashed on this file: {type(exc).__name__}: {exc}",
        SourceSpan.start_of(file),
        (f"at {where.filename}:{where.lineno}; please report this",),
    )


def lint_paths(
    paths: Sequence[str | Path], config: LintConfig, options: ExplorationOptions = DEFAULT_OPTIONS
) -> LintReport:
    """Lint every chart under `paths` (found by `select_files` with the configuration's
    `exclude`; explorations run with `options`); one bad file never stops the others.
    Every file is compiled first: the charts linted together are the chart set the
    family rules read (with the charts in the folder of each file named alone,
    `neighbour_set`, when a name is not among them)."""
    selection = select_files(paths, config.exclude)
    diagnostics: list[Diagnostic] = []
    crashes = 0
    compiled: list[tuple[Path, CompileResult]] = []
    for path in selection.files:
        try:
            compiled.append((path, compile_file(path)))
        except Exception as exc:  # a bug in statekit must not hide the other files' results
            crashes += 1
            diagnostics.append(_crash(str(path), exc))
    charts = [result.chart for _, result in compiled if result.chart is not None]
    named_files = [Path(p) for p in paths if Path(p).is_file()]
    for path, result in compiled:
        try:
            if result.chart is not None:
                chart_set = neighbour_set(result.chart, named_files, charts)
                found = lint_compiled(result, str(path), config, options, chart_set)
            else:  # the folders compiled only if the chart that failed invokes
                linted_and_folders = _linted_and_folders(charts, named_files)
                found = lint_compiled(result, str(path), config, options, linted_and_folders)
            diagnostics.extend(found)
        except Exception as exc:  # a bug in statekit must not hide the other files' results
            crashes += 1
            diagnostics.append(_crash(str(path), exc))
    ordered = tuple(sorted(diagnostics, key=Diagnostic.sort_key))
    return LintReport(
        tuple(str(f) for f in selection.files),
        ordered,
        crashes,
        selection.skipped,
        selection.empty_folders,
    )

"""Lint files and folders: compile each chart, run the chart rules, apply configuration."""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from statekit.analysis.facts import chart_facts
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.pipeline import compile_file
from statekit.compiler.source.files import describe_non_regular
from statekit.lint.config import LintConfig, with_chart_settings
from statekit.lint.registry import RULES

CHART_SUFFIXES = (".yaml", ".yml")
DEFAULT_OPTIONS = ExplorationOptions()
"""Explorations with the default bound and no progress display."""


class UsageError(Exception):
    """A path that does not exist or holds no chart (exit code 2)."""


@dataclass(frozen=True, slots=True)
class LintReport:
    """Every diagnostic of every file, sorted; `internal_errors` counts crashes of statekit."""

    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    internal_errors: int = 0

    @property
    def has_errors(self) -> bool:
        """Whether any finding is at error severity."""
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for d in self.diagnostics if d.severity is severity)


def collect_files(paths: Iterable[str | Path]) -> list[Path]:
    """Chart files named directly, and every *.yaml/*.yml below named folders (sorted)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.suffix.lower() in CHART_SUFFIXES and p.is_file()
            )
            if not found:
                raise UsageError(f"{raw}: no chart files (*.yaml, *.yml) in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            what = describe_non_regular(path) or "not a regular file"
            raise UsageError(f"{raw}: {what}")
    return list(dict.fromkeys(files))


def lint_file(
    path: Path, config: LintConfig, options: ExplorationOptions = DEFAULT_OPTIONS
) -> list[Diagnostic]:
    """All findings of one chart file, at their configured severities; the chart rules
    share one exploration, run with `options`."""
    result = compile_file(path)
    findings = list(result.diagnostics)
    if result.chart is not None:
        config, problems = with_chart_settings(config, result.chart.lint, str(path))
        findings.extend(problems)
        facts = chart_facts(result.chart, options)
        for rule in RULES.values():
            if rule.check is not None:
                findings.extend(rule.check(result.chart, facts))
    kept = (config.effective(d) for d in findings)
    return [d for d in kept if d is not None]


def lint_paths(
    paths: Sequence[str | Path], config: LintConfig, options: ExplorationOptions = DEFAULT_OPTIONS
) -> LintReport:
    """Lint every chart under `paths` (explorations run with `options`); one bad file
    never stops the others."""
    files = collect_files(paths)
    diagnostics: list[Diagnostic] = []
    crashes = 0
    for path in files:
        try:
            diagnostics.extend(lint_file(path, config, options))
        except Exception as exc:  # a bug in statekit must not hide the other files' results
            crashes += 1
            where = traceback.extract_tb(exc.__traceback__)[-1]
            diagnostics.append(
                Diagnostic(
                    "internal-error",
                    Severity.ERROR,
                    f"statekit crashed on this file: {type(exc).__name__}: {exc}",
                    SourceSpan.start_of(str(path)),
                    (f"at {where.filename}:{where.lineno}; please report this",),
                )
            )
    ordered = tuple(sorted(diagnostics, key=Diagnostic.sort_key))
    return LintReport(tuple(str(f) for f in files), ordered, crashes)

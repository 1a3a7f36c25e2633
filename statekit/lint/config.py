"""Lint configuration: `[tool.statekit.lint]` in pyproject.toml, then the chart's own `lint:` key.

```toml
[tool.statekit.lint]
ignore = ["unused-event"]
severity = { unused-guard = "error" }
```
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import LintSettings
from statekit.lint.registry import RULES


class ConfigError(Exception):
    """The project configuration is unusable (a usage error: exit code 2)."""


@dataclass(frozen=True, slots=True)
class LintConfig:
    """Which rules are ignored and which severities are overridden."""

    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=lambda: MappingProxyType({}))
    source: str = field(default="defaults", compare=False)

    def effective(self, diagnostic: Diagnostic) -> Diagnostic | None:
        """The diagnostic at its configured severity, or None when it is ignored or off."""
        if diagnostic.slug in self.ignore:
            return None
        severity = self.severity.get(diagnostic.slug)
        if severity is Severity.OFF:
            return None
        return diagnostic if severity is None else diagnostic.with_severity(severity)


def _problems(ignore: Iterable[str], severity: Mapping[str, str]) -> list[tuple[str, str]]:
    """(slug, problem) for every slug or severity that cannot be applied."""
    problems: list[tuple[str, str]] = []
    for slug in [*ignore, *severity]:
        rule = RULES.get(slug)
        if rule is None:
            problems.append((slug, f"unknown rule '{slug}' (rules: {', '.join(sorted(RULES))})"))
        elif not rule.configurable:
            problems.append(
                (
                    slug,
                    f"rule '{slug}' cannot be configured: a chart with this error "
                    "cannot be compiled",
                )
            )
    for slug, value in severity.items():
        if value not in {s.value for s in Severity}:
            problems.append(
                (slug, f"severity of '{slug}' must be error, warning or off, not {value!r}")
            )
    return problems


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or its parents."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_project_config(pyproject: Path | None) -> LintConfig:
    """Read `[tool.statekit.lint]`; no file or no table means defaults."""
    if pyproject is None:
        return LintConfig()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read configuration: {exc}") from exc
    table = data.get("tool", {}).get("statekit", {}).get("lint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.statekit.lint] must be a table")
    unknown = set(table) - {"ignore", "severity"}
    if unknown:
        raise ConfigError(
            f"{pyproject}: unknown key(s) in [tool.statekit.lint]: {', '.join(sorted(unknown))}"
            " (allowed: ignore, severity)"
        )
    ignore = table.get("ignore", [])
    severity = table.get("severity", {})
    if not isinstance(ignore, list) or not all(isinstance(s, str) for s in ignore):
        raise ConfigError(f"{pyproject}: [tool.statekit.lint] ignore must be a list of rule slugs")
    if not isinstance(severity, dict) or not all(isinstance(v, str) for v in severity.values()):
        raise ConfigError(f"{pyproject}: [tool.statekit.lint] severity must map slugs to strings")
    problems = _problems(ignore, severity)
    if problems:
        raise ConfigError(f"{pyproject}: " + "; ".join(p for _, p in problems))
    return LintConfig(
        frozenset(ignore),
        MappingProxyType({k: Severity(v) for k, v in severity.items()}),
        str(pyproject),
    )


def with_chart_settings(
    config: LintConfig, settings: LintSettings, file: str
) -> tuple[LintConfig, list[Diagnostic]]:
    """Layer a chart's own `lint:` key over the project configuration."""
    severity_map = dict(settings.severity)
    problems = _problems(settings.ignore, severity_map)
    block = settings.span or SourceSpan.start_of(file)
    spans = dict(settings.slug_spans)
    if problems:
        return config, [
            Diagnostic("schema", Severity.ERROR, p, spans.get(slug, block)) for slug, p in problems
        ]
    if not settings.ignore and not severity_map:
        return config, []
    merged = dict(config.severity)
    merged.update({k: Severity(v) for k, v in severity_map.items()})
    return (
        LintConfig(config.ignore | frozenset(settings.ignore), MappingProxyType(merged), file),
        [],
    )

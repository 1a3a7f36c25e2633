"""Lint configuration: `[tool.statekit.lint]` in pyproject.toml, then the chart's own `lint:` key.

```toml
[tool.statekit.lint]
ignore = ["unused-event"]
severity = { unused-guard = "error" }
exclude = ["generated/", "*.draft.yaml"]   # gitignore patterns, relative to this file's folder
```

The command line adds to this (`--ignore`, `--exclude`) or narrows it
(`--select`): see `LintConfig.with_command_line`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import LintSettings
from statekit.compiler.source.files import describe_non_regular, read_chart_bytes
from statekit.lint.registry import RULES


class ConfigError(Exception):
    """The project configuration is unusable (a usage error: exit code 2)."""


@dataclass(frozen=True, slots=True)
class Exclude:
    """Gitignore patterns for folder walks, relative to the folder `base`."""

    base: Path
    patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LintConfig:
    """Which rules run and at which severity, and which paths folder walks skip.

    `select` (None: every rule) keeps only the chart rules it names; compile
    rules always report, since a chart with such an error cannot be built.
    `exclude` holds the gitignore patterns folder walks skip, each group with
    the folder it is relative to.
    """

    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=lambda: MappingProxyType({}))
    source: str = field(default="defaults", compare=False)
    select: frozenset[str] | None = None
    exclude: tuple[Exclude, ...] = ()

    def effective(self, diagnostic: Diagnostic) -> Diagnostic | None:
        """The diagnostic at its configured severity, or None when it is ignored or off."""
        if not self.runs(diagnostic.slug):
            return None
        severity = self.severity.get(diagnostic.slug)
        if severity is Severity.OFF:
            return None
        return diagnostic if severity is None else diagnostic.with_severity(severity)

    def runs(self, slug: str) -> bool:
        """Whether findings of rule `slug` are reported (not ignored, selected if `select`)."""
        if slug in self.ignore:
            return False
        rule = RULES.get(slug)
        if self.select is None or rule is None or not rule.configurable:
            return True
        return slug in self.select

    def reports(self, slug: str) -> bool:
        """Whether any finding of rule `slug` can be reported: it runs and is not `off`."""
        return self.runs(slug) and self.severity.get(slug) is not Severity.OFF

    def with_command_line(
        self,
        *,
        select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> LintConfig:
        """This configuration with `--select` (replaces), `--ignore` and `--exclude` (add).

        Raises `ConfigError` naming an unknown rule, or one that cannot be ignored.
        Command-line patterns are relative to the current folder.
        """
        problems = [p for _, p in _problems(ignore, {})]
        problems += [p for slug, p in _problems(select, {}) if slug not in RULES]
        if problems:
            raise ConfigError("; ".join(problems))
        chosen = frozenset(select) if select else self.select
        patterns = self.exclude
        if exclude:
            patterns += (Exclude(base=Path.cwd().absolute(), patterns=tuple(exclude)),)
        return replace(
            self,
            ignore=self.ignore | frozenset(ignore),
            select=chosen,
            exclude=patterns,
        )


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


MAX_CONFIG_BYTES = 1 << 20
"""The largest pyproject.toml read for `[tool.statekit.lint]` (1 MiB)."""


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
    try:  # the bounded reader of charts: a FIFO or device named by --config never blocks
        raw = read_chart_bytes(pyproject, MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{pyproject}: the file has {MAX_CONFIG_BYTES + 1} bytes or more, "
                f"over the limit of {MAX_CONFIG_BYTES}"
            )
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as exc:
        what = describe_non_regular(pyproject) or exc.strerror
        raise ConfigError(f"{pyproject}: cannot read configuration: {what}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read configuration: {exc}") from exc
    table = data.get("tool", {}).get("statekit", {}).get("lint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.statekit.lint] must be a table")
    unknown = set(table) - {"ignore", "severity", "exclude"}
    if unknown:
        raise ConfigError(
            f"{pyproject}: unknown key(s) in [tool.statekit.lint]: {', '.join(sorted(unknown))}"
            " (allowed: exclude, ignore, severity)"
        )
    ignore = table.get("ignore", [])
    severity = table.get("severity", {})
    exclude = table.get("exclude", [])
    if not isinstance(ignore, list) or not all(isinstance(s, str) for s in ignore):
        raise ConfigError(f"{pyproject}: [tool.statekit.lint] ignore must be a list of rule slugs")
    if not isinstance(exclude, list) or not all(isinstance(s, str) for s in exclude):
        raise ConfigError(
            f"{pyproject}: [tool.statekit.lint] exclude must be a list of gitignore patterns"
        )
    if not isinstance(severity, dict) or not all(isinstance(v, str) for v in severity.values()):
        raise ConfigError(f"{pyproject}: [tool.statekit.lint] severity must map slugs to strings")
    problems = _problems(ignore, severity)
    if problems:
        raise ConfigError(f"{pyproject}: " + "; ".join(p for _, p in problems))
    return LintConfig(
        ignore=frozenset(ignore),
        severity=MappingProxyType({k: Severity(v) for k, v in severity.items()}),
        source=str(pyproject),
        exclude=(Exclude(base=pyproject.parent.absolute(), patterns=tuple(exclude)),)
        if exclude
        else (),
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
        replace(
            config,
            ignore=config.ignore | frozenset(settings.ignore),
            severity=MappingProxyType(merged),
            source=file,
        ),
        [],
    )

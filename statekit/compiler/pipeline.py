"""The whole compiler: text → positioned tree → schema check → IR, or diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart
from statekit.compiler.model.freezing import freeze
from statekit.compiler.model.resolution import resolve_model
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.rules import yaml_syntax
from statekit.compiler.schema import validator
from statekit.compiler.source.files import read_chart_bytes
from statekit.compiler.source.limits import DEFAULT_LIMITS, Limits
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode


@dataclass(frozen=True, slots=True)
class CompileResult:
    """A chart (when there was no error) and every compile diagnostic, sorted by position."""

    chart: CompiledChart | None
    diagnostics: tuple[Diagnostic, ...]
    source: str | None = None  # the text compiled (None: the file could not be read)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The diagnostics at error severity."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)


def _sorted(diagnostics: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    unique = dict.fromkeys(diagnostics)
    return tuple(sorted(unique, key=Diagnostic.sort_key))


def compile_source(
    source: bytes | str, file: str, limits: Limits = DEFAULT_LIMITS
) -> CompileResult:
    """Compile chart text, loaded within `limits`; never raises for bad input."""
    with collector_paused():
        result = _compile(source, file, limits)
    text = source if isinstance(source, str) else source.decode("utf-8", errors="replace")
    return replace(result, source=text)


def _compile(source: bytes | str, file: str, limits: Limits) -> CompileResult:
    root, problems = load_yaml(source, file, limits)
    if root is None or any(p.severity is Severity.ERROR for p in problems):
        return CompileResult(None, _sorted(list(problems)))
    if not isinstance(root, MappingNode):
        return CompileResult(
            None,
            (
                Diagnostic(
                    slug=schema_rule.SLUG,
                    severity=Severity.ERROR,
                    message="the top level must be a mapping",
                    span=root.span,
                ),
            ),
        )
    schema_problems = validator.validate(root, file)
    if schema_problems:
        return CompileResult(None, _sorted([*problems, *schema_problems]))
    resolution = resolve_model(root, file)
    chart = None if resolution.model is None else freeze(resolution.model)
    return CompileResult(chart, _sorted([*problems, *resolution.problems]))


def compile_file(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> CompileResult:
    """Compile a chart file; an unreadable file is a diagnostic, not an exception.

    Only a regular file is read (a FIFO, a device, a socket or a folder is a
    diagnostic saying what it is), and at most one byte past `limits.max_bytes`.
    """
    file = str(path)
    try:
        data = read_chart_bytes(path, limits.max_bytes + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return CompileResult(
            None,
            (
                Diagnostic(
                    slug=yaml_syntax.SLUG,
                    severity=Severity.ERROR,
                    message=f"cannot read file: {reason}",
                    span=SourceSpan.start_of(file),
                ),
            ),
        )
    return compile_source(data, file, limits)

"""The whole compiler: text → positioned tree → schema check → IR, or diagnostics."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.gc_pause import collector_paused
from statekit.compiler.ir import CompiledChart
from statekit.compiler.model.freezing import ResolvedModel, freeze
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


@dataclass(frozen=True, slots=True)
class CheckedSource:
    """Chart text checked by every pass that reports diagnostics, not yet frozen into
    the IR: the same diagnostics `compile_source` gives, and the resolved model (None
    when there was an error). The language server publishes the diagnostics first and
    freezes afterwards: freezing (the IR's tables and the chart's digest) reports
    nothing and took 35% of the compile of a 500-state chart (bench/lsp_latency.py)."""

    model: ResolvedModel | None
    diagnostics: tuple[Diagnostic, ...]
    source: str

    def frozen(self) -> CompileResult:
        """The compile result: the model frozen into a chart, with these diagnostics."""
        with collector_paused():
            chart = None if self.model is None else freeze(self.model)
        return CompileResult(chart, self.diagnostics, self.source)


def compile_source(
    source: bytes | str, file: str, limits: Limits = DEFAULT_LIMITS
) -> CompileResult:
    """Compile chart text, loaded within `limits`; never raises for bad input."""
    with collector_paused():  # one pause for both steps, as for one bulk build
        return check_source(source, file, limits).frozen()


def check_source(source: bytes | str, file: str, limits: Limits = DEFAULT_LIMITS) -> CheckedSource:
    """Every pass of `compile_source` but the freezing: its diagnostics and the model."""
    with collector_paused():
        model, diagnostics = _check(source, file, limits)
    text = source if isinstance(source, str) else source.decode("utf-8", errors="replace")
    return CheckedSource(model, diagnostics, text)


def _check(
    source: bytes | str, file: str, limits: Limits
) -> tuple[ResolvedModel | None, tuple[Diagnostic, ...]]:
    root, problems = load_yaml(source, file, limits)
    if root is None or any(p.severity is Severity.ERROR for p in problems):
        return None, _sorted(list(problems))
    if not isinstance(root, MappingNode):
        top = Diagnostic(
            slug=schema_rule.SLUG,
            severity=Severity.ERROR,
            message="the top level must be a mapping",
            span=root.span,
        )
        return None, (top,)
    schema_problems = validator.validate(root, file)
    if schema_problems:
        return None, _sorted([*problems, *schema_problems])
    resolution = resolve_model(root, file)
    return resolution.model, _sorted([*problems, *resolution.problems])


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

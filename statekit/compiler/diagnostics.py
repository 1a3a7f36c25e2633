"""Positions and diagnostics: the values every stage of statekit reports with.

A `SourceSpan` is converted from YAML marks in one place (the loader) and then
travels unchanged into every IR node and every diagnostic.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, order=True)
class SourceSpan:
    """A region of a source file; lines and columns are 1-based, the end is exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def start_of(cls, file: str) -> SourceSpan:
        """The span of the first character of `file` (for whole-file problems)."""
        return cls(file, 1, 1, 1, 1)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Severity(enum.Enum):
    """How serious a finding is; only `ERROR` makes `statekit lint` exit 1. `INFO` is a
    rule's default only (worth knowing, rarely worth changing the chart for); a lint
    configuration sets `error`, `warning` or `off`."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class RelatedLocation:
    """Another place a finding concerns (SARIF `relatedLocations`): where, and why."""

    span: SourceSpan
    message: str


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of a counterexample trace, as data for machine-readable formats (the notes
    print the same trace for people): the event (None: the initial macrostep), what the
    chart does (`→ {a, b.c}`, `REJECTED REASON`), the payload checked by replaying the
    trace (its fields as (name, value) pairs; None: none found, the step is assumed) and
    the data-guard outcomes the analysis assumed."""

    event: str | None
    outcome: str
    payload: tuple[tuple[str, object], ...] | None
    assuming: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: complete when made, never mutated.

    `notes` carry extra lines such as candidate names or a counterexample trace;
    `related` other places the finding concerns (the transition that breaks an
    invariant, say), each also named in the notes for plain-text readers; `trace` the
    counterexample trace the notes print, step by step, for machine-readable formats.
    """

    slug: str
    severity: Severity
    message: str
    span: SourceSpan
    notes: tuple[str, ...] = field(default=())
    related: tuple[RelatedLocation, ...] = field(default=())
    trace: tuple[TraceStep, ...] = field(default=())

    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Order by file, then position, then slug and message (stable output)."""
        return (self.span.file, self.span.line, self.span.column, self.slug, self.message)

    def with_severity(self, severity: Severity) -> Diagnostic:
        """The same finding at another severity (per-rule configuration)."""
        return Diagnostic(
            slug=self.slug,
            severity=severity,
            message=self.message,
            span=self.span,
            notes=self.notes,
            related=self.related,
            trace=self.trace,
        )


class CompileError(Exception):
    """Raised by `statekit.load` when a chart cannot be compiled.

    `.diagnostics` holds every error found, sorted by position.
    """

    def __init__(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.diagnostics = diagnostics
        first = diagnostics[0] if diagnostics else None
        summary = (
            f"{first.span}: {first.severity.value}[{first.slug}] {first.message}"
            if first
            else "chart cannot be compiled"
        )
        more = f" (and {len(diagnostics) - 1} more)" if len(diagnostics) > 1 else ""
        super().__init__(summary + more)

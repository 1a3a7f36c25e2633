"""What the output formats of `statekit lint` share: the diagnostics shown, spans clamped
to what SARIF and GitHub accept, paths relative to a base folder, a trace as JSON, and the
JSON dump."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan, TraceStep

WINDOWS_DRIVE = re.compile(r"[A-Za-z]:/")
STDIN_NAME = "<stdin>"
"""The file name of a chart read from standard input when no `--stdin-filename` is given."""


def rendered_diagnostics(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics a format renders: all but the disabled (`Severity.OFF`) ones."""
    return [d for d in diagnostics if d.severity is not Severity.OFF]


def with_notes(diagnostic: Diagnostic) -> str:
    """The message and its notes, one per line."""
    return "\n".join((diagnostic.message, *diagnostic.notes))


def clamped(span: SourceSpan) -> tuple[int, int, int, int]:
    """1-based start and exclusive end, never before the start (SARIF and GitHub reject it)."""
    line = max(span.line, 1)
    column = max(span.column, 1)
    end_line = max(span.end_line, line)
    end_column = max(span.end_column, 1)
    if end_line == line:
        end_column = max(end_column, column)
    return line, column, end_line, end_column


def dump(document: object) -> str:
    """A JSON document as the formats write it: sorted keys, indented, a final newline."""
    return json.dumps(document, sort_keys=True, indent=2) + "\n"


def trace_json(trace: Sequence[TraceStep]) -> list[dict[str, object]]:
    """A counterexample trace as JSON: per step its event (null: the initial macrostep),
    outcome, checked `payload` (null: none found, the step is assumed; for the initial
    macrostep the context to start the instance with, absent when it is the declared
    defaults) and the data-guard outcomes it `assuming`."""
    out: list[dict[str, object]] = []
    for step in trace:
        entry: dict[str, object] = {"event": step.event, "outcome": step.outcome}
        if step.event is not None:
            entry["payload"] = None if step.payload is None else dict(step.payload)
        elif step.payload:
            entry["payload"] = dict(step.payload)
        entry["assuming"] = list(step.assuming)
        out.append(entry)
    return out


def base_folder(base_dir: Path | None) -> str:
    """The base folder as an absolute, normalised path with `/` separators."""
    return posixpath.normpath((base_dir or Path.cwd()).absolute().as_posix())


def absolute_path(file: str, base: str) -> str | None:
    """`file` (relative ones from the current folder) as a normalised path with `/`,
    or None for a UNC or drive-letter path (never below a POSIX base)."""
    path = file.replace("\\", "/")
    if path.startswith("//") or WINDOWS_DRIVE.match(path):
        if not WINDOWS_DRIVE.match(base):
            return None
        return posixpath.normpath(path)
    if not path.startswith("/"):
        path = posixpath.join(Path.cwd().absolute().as_posix(), path)
    return posixpath.normpath(path)


def path_below(path: str, base: str) -> str | None:
    """`path` relative to `base` when it lies below it, else None."""
    if path == base:
        return None
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def relative_or_given(file: str, base: str) -> str:
    """`file` relative to `base` when it lies below it, else as given."""
    absolute = absolute_path(file, base)
    relative = path_below(absolute, base) if absolute is not None else None
    return file if relative is None else relative

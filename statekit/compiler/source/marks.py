"""Positions: parser marks as spans, and a parser's complaint as a positioned diagnostic.

YAML marks are 0-based; a `SourceSpan` is 1-based with an exclusive end. `event_span`
is the one place where an event's marks become a span; `new_span` makes a span
faster than the dataclass's own constructor (the loader makes one per node).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import yaml
from yaml.events import Event

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import yaml_limits, yaml_syntax
from statekit.compiler.source.limits import byte_position, char_position, point
from statekit.compiler.source.yaml_hints import yaml_hint

YAML_BREAK: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
"""Line breaks as YAML parsers count them."""


def _span_maker() -> Callable[[str, int, int, int, int], SourceSpan]:
    """`SourceSpan` made without its frozen dataclass's `__init__` (one
    `object.__setattr__` per field): its slots are filled directly, 0.38 instead of
    0.64 µs a span, about 3 of the 40 ms the loader took on bench/lsp_latency.py's
    500-state chart. The class itself when its fields are not the five expected."""
    fields = ("file", "line", "column", "end_line", "end_column")
    if getattr(SourceSpan, "__slots__", None) != fields:  # pragma: no cover - a new field
        return SourceSpan
    new = object.__new__
    set_file, set_line, set_column, set_end_line, set_end_column = (
        SourceSpan.__dict__[name].__set__ for name in fields
    )

    def make(file: str, line: int, column: int, end_line: int, end_column: int) -> SourceSpan:
        span = new(SourceSpan)
        set_file(span, file)
        set_line(span, line)
        set_column(span, column)
        set_end_line(span, end_line)
        set_end_column(span, end_column)
        return span

    return make


new_span: Final = _span_maker()
"""`SourceSpan(file, line, column, end_line, end_column)`, made faster."""


def event_span(file: str, event: Event) -> SourceSpan:
    """The one place where 0-based YAML marks become a 1-based span."""
    start, end = event.start_mark, event.end_mark
    if start is None or end is None:  # parsers always set marks; this keeps the types honest
        return SourceSpan.start_of(file)
    return new_span(file, start.line + 1, start.column + 1, end.line + 1, end.column + 1)


def yaml_error_diagnostic(
    error: yaml.YAMLError, file: str, text: str, data: bytes, c_reader: bool
) -> Diagnostic:
    """A parser's complaint as a diagnostic at its 1-based position (`c_reader`: libyaml's
    reader read `data`, else the pure-Python one read `text`)."""
    if isinstance(error, yaml.reader.ReaderError):
        # The C reader reports a byte offset into `data`, the Python one a character offset.
        at = int(error.position)
        where = byte_position(data, at) if c_reader else char_position(text, at)
        char = error.character
        shown = f" (U+{char:04X})" if isinstance(char, int) else ""
        return Diagnostic(
            yaml_syntax.SLUG, Severity.ERROR, f"{error.reason}{shown}", point(file, *where)
        )
    if not isinstance(error, yaml.MarkedYAMLError):
        return Diagnostic(yaml_syntax.SLUG, Severity.ERROR, str(error), SourceSpan.start_of(file))
    last = _end_of(text)
    mark = error.problem_mark or error.context_mark
    line, column = min((mark.line + 1, mark.column + 1), last) if mark is not None else (1, 1)
    problem = error.problem or error.context or "invalid YAML"
    # libyaml >= 0.2.6 has its own nesting limit (1000): report it as the limit it is.
    slug = yaml_limits.SLUG if "maximum nesting depth" in problem else yaml_syntax.SLUG
    notes: tuple[str, ...] = ()
    context_at: tuple[int, int] | None = None
    if error.problem and error.context and error.context_mark is not None:
        context_at = min((error.context_mark.line + 1, error.context_mark.column + 1), last)
        notes = (f"{error.context} (line {context_at[0]}, column {context_at[1]})",)
    hint = yaml_hint(text, problem, error.context, (line, column), context_at)
    notes += (hint,) if hint is not None else ()
    return Diagnostic(slug, Severity.ERROR, problem, point(file, line, column), notes)


def _end_of(text: str) -> tuple[int, int]:
    """The 1-based position just after the last character (a parser may report one
    past it, such as the line after a last line without a line break)."""
    breaks = list(YAML_BREAK.finditer(text))
    if not breaks:
        return 1, len(text) + 1
    return len(breaks) + 1, len(text) - breaks[-1].end() + 1

"""Where a place inside an expression is in the chart file: AST columns mapped onto spans."""

from __future__ import annotations

import ast

from statekit.compiler.diagnostics import SourceSpan


class ExpressionPositions:
    """Maps columns of an expression's text onto spans of the YAML scalar that holds it.

    Columns map onto the file only when the scalar is on one line; otherwise every
    place is the whole scalar's span. A quoted scalar's span starts at its quote:
    recognised by its width (an escape inside the quotes defeats this, and the
    column is then one off).
    """

    def __init__(self, source: str, span: SourceSpan) -> None:
        self.text = source.lstrip()
        self.span = span
        self.lines = self.text.split("\n")
        one_line = span.line == span.end_line and "\n" not in self.text.rstrip("\n")
        quoted = one_line and span.end_column - span.column == len(source) + 2
        lead = len(source) - len(self.text)
        self.base_column = span.column + lead + int(quoted) if one_line else None

    def _column(self, lineno: int, byte_offset: int) -> int:
        """0-based character column of an AST (UTF-8 byte) offset on source line `lineno`."""
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        if line.isascii():
            return byte_offset
        return len(line.encode()[:byte_offset].decode(errors="ignore"))

    def offset_of(self, node: ast.expr) -> int:
        """The 0-based character offset in the whole text where `node` starts."""
        before = sum(len(line) + 1 for line in self.lines[: node.lineno - 1])
        return before + self._column(node.lineno, node.col_offset)

    def at(self, start: int, end: int) -> SourceSpan:
        """The span of 0-based character columns `start:end` of the expression's first line."""
        if self.base_column is None:
            return self.span
        line = self.span.line
        return SourceSpan(
            file=self.span.file,
            line=line,
            column=self.base_column + start,
            end_line=line,
            end_column=self.base_column + end,
        )

    def span_of(self, node: ast.AST | None) -> SourceSpan:
        """The file span of an AST node (the whole scalar's span off the first line)."""
        if not isinstance(node, ast.expr) or node.lineno != 1:
            return self.span
        start = self._column(1, node.col_offset)
        end_lineno, end_offset = node.end_lineno or 1, node.end_col_offset or node.col_offset
        end = self._column(1, end_offset) if end_lineno == 1 else len(self.lines[0])
        return self.at(start, max(end, start + 1))

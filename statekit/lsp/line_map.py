"""Line offsets of a document: 1-based source spans to 0-based LSP ranges and back."""

from __future__ import annotations

from statekit.compiler.diagnostics import SourceSpan
from statekit.lsp.records import Position, Range


class LineMap:
    """Offsets of the document's lines, to turn 1-based spans into 0-based ranges."""

    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line) + 1

    def range_of(self, span: SourceSpan) -> Range:
        """The 0-based range of a span."""
        return Range(
            Position(span.line - 1, span.column - 1),
            Position(span.end_line - 1, span.end_column - 1),
        )

    def offset(self, position: Position) -> int:
        """The character offset of a position (clamped to the document)."""
        if position.line >= len(self.lines):
            return self.starts[-1] + len(self.lines[-1])
        return self.starts[position.line] + min(position.character, len(self.lines[position.line]))

    def position(self, offset: int) -> Position:
        """The position of a character offset."""
        line = 0
        lo, hi = 0, len(self.starts) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.starts[mid] <= offset:
                line, lo = mid, mid + 1
            else:
                hi = mid - 1
        return Position(line, offset - self.starts[line])

    def slice(self, range_: Range, source: str) -> str:
        """The text of a range."""
        return source[self.offset(range_.start) : self.offset(range_.end)]

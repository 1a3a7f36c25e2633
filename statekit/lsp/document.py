"""One version of a chart document: its text, compile result and name index."""

from __future__ import annotations

from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CompileResult, compile_source
from statekit.lsp.index import build_index
from statekit.lsp.line_map import LineMap
from statekit.lsp.names import Declaration, Index, Kind, Reference
from statekit.lsp.records import Position, Range


class ChartDocument:
    """One version of a chart document: its text, compile result and name index."""

    def __init__(self, text: str, result: CompileResult) -> None:
        self.text = text
        self.result = result
        self.index: Index = build_index(text)
        self.lines = LineMap(text)
        self._declarations: dict[tuple[Kind, str], Declaration] = {}
        for decl in self.index.declarations:
            self._declarations.setdefault((decl.kind, decl.key), decl)

    @property
    def chart(self) -> CompiledChart | None:
        """The compiled chart, when the text compiles."""
        return self.result.chart

    def at(self, position: Position) -> tuple[Kind, str | None, Range] | None:
        """The declared or referenced name at `position`: its kind, key and range."""
        for decl in self.index.declarations:
            if decl.range.contains(position):
                return decl.kind, decl.key, decl.range
        for ref in self.index.references:
            if ref.range.contains(position) and ref.precise:
                return ref.kind, ref.key, ref.range
        return None

    def declaration(self, kind: Kind, key: str | None) -> Declaration | None:
        """The declaration of a key, or None."""
        if key is None:
            return None
        return self._declarations.get((kind, key))

    def uses(self, kind: Kind, key: str) -> list[Reference]:
        """Every resolved reference to a key, in document order."""
        return [r for r in self.index.references if r.kind is kind and r.key == key]


def chart_document(text: str, result: CompileResult | None = None) -> ChartDocument:
    """Index `text` (compiled as `result`, or compiled here when None)."""
    return ChartDocument(text, result if result is not None else compile_source(text, "<doc>"))

"""One version of a chart document: its text, compile result and name index.

While its YAML does not parse, the index is that of the text with the broken lines
blanked (`statekit.lsp.repair`): names elsewhere keep their declarations and uses.
"""

from __future__ import annotations

from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CompileResult, compile_source
from statekit.lsp.line_map import LineMap
from statekit.lsp.names import Declaration, Index, Kind, Reference
from statekit.lsp.records import Position, Range
from statekit.lsp.repair import repaired_index


class ChartDocument:
    """One version of a chart document: its text, compile result and name index."""

    def __init__(self, text: str, result: CompileResult, parsed_before: str | None = None) -> None:
        self.text = text
        self.result = result
        repaired = repaired_index(text, parsed_before)
        self.index: Index = repaired.index
        self.blanked = repaired.blanked
        """The 0-based lines the index leaves out (a YAML error's; none when the text parses)."""
        parsed = self.index.root is not None and not self.blanked
        self.parsed_text = text if parsed else parsed_before
        """The last text of the document that parsed as YAML, if any."""
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


def chart_document(
    text: str, result: CompileResult | None = None, previous: ChartDocument | None = None
) -> ChartDocument:
    """Index `text` (compiled as `result`, or compiled here when None); `previous` is the
    document's former version, whose last text that parsed guides the repair of a text
    that does not."""
    compiled = result if result is not None else compile_source(text, "<doc>")
    return ChartDocument(text, compiled, previous.parsed_text if previous is not None else None)

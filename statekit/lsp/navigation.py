"""Navigation over one chart document: the entry points the language server calls.

Build a `ChartDocument` once per document version with `chart_document(text,
result)` (`result` is the `CompileResult` the server already has for that
text; without one it is compiled here), then ask it questions. Every function
is pure and degrades on a broken document: what the YAML still says (names,
keys, positions) answers even when the chart does not compile, and when the
text is not YAML at all the answers are empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.pipeline import CompileResult
from statekit.lsp.records import (
    CodeAction,
    CompletionItem,
    DocumentSymbol,
    Hover,
    Position,
    Range,
    RenameOutcome,
)


class ChartDocument:
    """One version of a chart document: its text, compile result and name index."""

    def __init__(self, text: str, result: CompileResult) -> None:
        self.text = text
        self.result = result


def chart_document(text: str, result: CompileResult | None = None) -> ChartDocument:
    """Index `text` (compiled as `result`, or compiled here when None)."""
    from statekit.compiler.pipeline import compile_source

    return ChartDocument(text, result if result is not None else compile_source(text, "<doc>"))


def completions(doc: ChartDocument, position: Position) -> tuple[CompletionItem, ...]:
    """What may be typed at `position`: state references, events, guards, fields, reasons."""
    return ()


def hover(doc: ChartDocument, position: Position) -> Hover | None:
    """What the name at `position` is: a state, event, guard, context or payload field."""
    return None


def definition(doc: ChartDocument, position: Position) -> tuple[Range, ...]:
    """Where the name at `position` is declared (the key of its declaration)."""
    return ()


def references(
    doc: ChartDocument, position: Position, *, include_declaration: bool = True
) -> tuple[Range, ...]:
    """Every place the name at `position` is used, in document order."""
    return ()


def document_symbols(doc: ChartDocument) -> tuple[DocumentSymbol, ...]:
    """The outline: the state tree, then events, guards, context fields and invariants."""
    return ()


def prepare_rename(doc: ChartDocument, position: Position) -> Range | None:
    """The range of the renameable name (state, event or guard) at `position`, or None."""
    return None


def rename(doc: ChartDocument, position: Position, new_name: str) -> RenameOutcome:
    """Rename the state, event or guard at `position` everywhere, or say why not."""
    return RenameOutcome(refusal="nothing to rename here")


def code_actions(
    doc: ChartDocument, range: Range, diagnostics: Sequence[Diagnostic]
) -> tuple[CodeAction, ...]:
    """Quick fixes for the findings of `diagnostics` (compile and lint) that touch `range`."""
    return ()

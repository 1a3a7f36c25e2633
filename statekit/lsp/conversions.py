"""Conversions between statekit's records (1-based or code-point positions) and LSP's types
(0-based positions in the client's units)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.lint.registry import RULES
from statekit.lint.sarif_format import help_uri
from statekit.lsp import records

SOURCE = "statekit"
"""The `source` of every diagnostic the server publishes."""

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def span_positions(span: SourceSpan) -> tuple[records.Position, records.Position]:
    """The 0-based code-point start and end of a statekit span (the end never before the start)."""
    start = records.Position(max(span.line - 1, 0), max(span.column - 1, 0))
    end = records.Position(max(span.end_line - 1, 0), max(span.end_column - 1, 0))
    return start, max(start, end)


def to_client(document: TextDocument, where: records.Range) -> types.Range:
    """A code-point range of `document` in the client's position encoding."""
    return document.range_to_client_units(
        ServerTextRange(
            start=ServerTextPosition(where.start.line, where.start.character),
            end=ServerTextPosition(where.end.line, where.end.character),
        )
    )


def from_client(document: TextDocument, position: types.Position) -> records.Position:
    """A client position in `document` as code points."""
    server = document.position_from_client_units(position)
    return records.Position(server.line, server.character)


def range_from_client(document: TextDocument, where: types.Range) -> records.Range:
    """A client range in `document` as code points."""
    return records.Range(from_client(document, where.start), from_client(document, where.end))


def span_range(document: TextDocument, span: SourceSpan) -> types.Range:
    """The LSP range of a statekit span in `document` (1-based code points to client units)."""
    start, end = span_positions(span)
    return to_client(document, records.Range(start, end))


def hints(finding: Diagnostic) -> tuple[str, ...]:
    """The notes of a finding that are advice ("did you mean 'paid'?", "declare it under
    events: ..."): every note but the lines of a list or trace (indented) and the lines
    that introduce one (ending in a colon)."""
    return tuple(
        note
        for note in finding.notes
        if note.strip() and not note[:1].isspace() and not note.rstrip().endswith(":")
    )


def diagnostic_message(finding: Diagnostic) -> str:
    """The message an editor shows: the finding's message, then its hints one per line.

    Neovim's float, flymake and VS Code's problems list show the message but not
    `relatedInformation`, so the advice goes in both."""
    return "\n".join((finding.message, *hints(finding)))


def lsp_diagnostic(finding: Diagnostic, document: TextDocument, file: str) -> types.Diagnostic:
    """A statekit finding as an LSP diagnostic: the hints in its message (`diagnostic_message`),
    related places and every note as relatedInformation, and a rule's documentation (its
    heading in docs/rules.md) as `codeDescription`, which editors link the code to."""
    here = span_range(document, finding.span)
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(
                uri=_uri_of(r.span.file, document, file), range=_range_in(r.span, document, file)
            ),
            message=r.message,
        )
        for r in finding.related
    ]
    related += [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=document.uri, range=here), message=note
        )
        for note in finding.notes
    ]
    return types.Diagnostic(
        range=here,
        message=diagnostic_message(finding),
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Information),
        code=finding.slug,
        code_description=(
            types.CodeDescription(href=help_uri(finding.slug)) if finding.slug in RULES else None
        ),
        source=SOURCE,
        related_information=related or None,
    )


def _uri_of(span_file: str, document: TextDocument, file: str) -> str:
    if span_file == file:
        return document.uri
    return Path(span_file).absolute().as_uri()


def _range_in(span: SourceSpan, document: TextDocument, file: str) -> types.Range:
    if span.file == file:
        return span_range(document, span)
    start, end = span_positions(span)  # another file: code points, as best we know
    return types.Range(
        start=types.Position(start.line, start.character),
        end=types.Position(end.line, end.character),
    )


def text_edit(document: TextDocument, edit: records.TextEdit) -> types.TextEdit:
    """A navigation edit as an LSP text edit."""
    return types.TextEdit(range=to_client(document, edit.range), new_text=edit.new_text)


def completion_item(document: TextDocument, item: records.CompletionItem) -> types.CompletionItem:
    """A navigation completion as an LSP completion item."""
    return types.CompletionItem(
        label=item.label,
        kind=types.CompletionItemKind(int(item.kind)),
        detail=item.detail,
        text_edit=text_edit(document, item.edit),
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=item.documentation)
        if item.documentation
        else None,
    )


def document_symbol(document: TextDocument, symbol: records.DocumentSymbol) -> types.DocumentSymbol:
    """A navigation symbol (and its children) as an LSP document symbol."""
    return types.DocumentSymbol(
        name=symbol.name,
        kind=types.SymbolKind(int(symbol.kind)),
        detail=symbol.detail or None,
        range=to_client(document, symbol.range),
        selection_range=to_client(document, symbol.selection_range),
        children=[document_symbol(document, c) for c in symbol.children] or None,
    )

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
from statekit.lsp.actions import actions_for
from statekit.lsp.completion import complete
from statekit.lsp.document import ChartDocument, chart_document
from statekit.lsp.expression_words import expression_word_hover
from statekit.lsp.hover import describe, field_type
from statekit.lsp.index import Kind
from statekit.lsp.records import (
    CodeAction,
    CompletionItem,
    DocumentSymbol,
    Hover,
    Position,
    Range,
    RenameOutcome,
    SymbolKind,
)
from statekit.lsp.rename import RENAMEABLE, rename_at
from statekit.lsp.timer_rename import label_range, timer_label

__all__ = [
    "ChartDocument",
    "chart_document",
    "code_actions",
    "completions",
    "definition",
    "document_symbols",
    "hover",
    "prepare_rename",
    "references",
    "rename",
]


def completions(doc: ChartDocument, position: Position) -> tuple[CompletionItem, ...]:
    """What may be typed at `position`: state references, events, guards, fields, reasons."""
    return complete(doc, position)


def hover(doc: ChartDocument, position: Position) -> Hover | None:
    """What the name at `position` is: a state, event, guard, context or payload field, or
    a word of the expression language (`now`, `str`, `format`, a duration literal)."""
    found = doc.at(position)
    if found is None:
        if any(r.start <= position <= r.end for r in doc.index.expressions):
            line = doc.text.split("\n")[position.line]
            return expression_word_hover(line, position)  # `now`, `str`, a duration...
        return None
    kind, key, rng = found
    if key is None:
        return None
    markdown = describe(doc, kind, key)
    return None if markdown is None else Hover(markdown=markdown, range=rng)


def definition(doc: ChartDocument, position: Position) -> tuple[Range, ...]:
    """Where the name at `position` is declared (the key of its declaration)."""
    found = doc.at(position)
    if found is None or found[1] is None:
        return ()
    kind, key, _ = found
    assert key is not None
    if kind is Kind.PAYLOAD:
        ref = next((r for r in doc.index.references if r.range == found[2]), None)
        if ref is not None:
            keys = [f"{e}.{ref.text}" for e in ref.events]
            return tuple(
                d.range for d in doc.index.declarations if d.kind is kind and d.key in keys
            )
    decl = doc.declaration(kind, key)
    return () if decl is None else (decl.range,)


def references(
    doc: ChartDocument, position: Position, *, include_declaration: bool = True
) -> tuple[Range, ...]:
    """Every place the name at `position` is used, in document order."""
    found = doc.at(position)
    if found is None or found[1] is None:
        return ()
    kind, key, _ = found
    assert key is not None
    ranges = [r.range for r in doc.uses(kind, key)]
    if kind is Kind.PAYLOAD:
        event, name = key.split(".", 1)
        ranges = [
            r.range
            for r in doc.index.references
            if r.kind is kind and r.text == name and event in r.events
        ]
    decl = doc.declaration(kind, key)
    if include_declaration and decl is not None:
        ranges.append(decl.range)
    return tuple(sorted(set(ranges)))


_SYMBOL_KINDS = {
    Kind.EVENT: SymbolKind.EVENT,
    Kind.GUARD: SymbolKind.FUNCTION,
    Kind.CONTEXT: SymbolKind.FIELD,
    Kind.INVARIANT: SymbolKind.CONSTANT,
    Kind.DEFINITION: SymbolKind.CONSTANT,
    Kind.TABLE: SymbolKind.NAMESPACE,
}


def document_symbols(doc: ChartDocument) -> tuple[DocumentSymbol, ...]:
    """The outline: the state tree, then events, guards, context fields, invariants,
    definitions and tables."""
    index = doc.index
    if index.root is None:
        return ()
    decls = {d.key: d for d in index.declarations if d.kind is Kind.STATE}

    def state_symbol(path: str) -> DocumentSymbol:
        decl = decls[path]
        info = index.states[path]
        return DocumentSymbol(
            name=info.name,
            kind=SymbolKind.CLASS,
            detail=path,
            range=decl.whole,
            selection_range=decl.range,
            children=tuple(state_symbol(c) for c in info.children if c in decls),
        )

    symbols = [state_symbol(c) for c in index.states[""].children if c in decls]
    for kind in (Kind.EVENT, Kind.GUARD, Kind.CONTEXT, Kind.INVARIANT, Kind.DEFINITION, Kind.TABLE):
        for decl in index.declarations:
            if decl.kind is kind:
                children: tuple[DocumentSymbol, ...] = ()
                if kind is Kind.EVENT:
                    children = tuple(
                        DocumentSymbol(
                            name=d.name,
                            kind=SymbolKind.FIELD,
                            detail=field_type(d.node),
                            range=d.whole,
                            selection_range=d.range,
                        )
                        for d in index.declarations
                        if d.kind is Kind.PAYLOAD and d.key.startswith(decl.key + ".")
                    )
                symbols.append(
                    DocumentSymbol(
                        name=decl.name,
                        kind=_SYMBOL_KINDS[kind],
                        detail=kind.value,
                        range=decl.whole,
                        selection_range=decl.range,
                        children=children,
                    )
                )
    return tuple(symbols)


def prepare_rename(doc: ChartDocument, position: Position) -> Range | None:
    """The range of the renameable name (state, event, guard, a named timer's id) at
    `position`, or None."""
    found = doc.at(position)
    if found is None or found[1] is None or found[0] not in RENAMEABLE:
        return None
    kind, key, rng = found
    if kind is not Kind.TIMER or key is None:
        return rng
    if timer_label(doc, key) is None:
        return None  # an unnamed timer: nothing to rename
    decl = doc.declaration(kind, key)
    if decl is not None and decl.range == rng:
        return rng
    return label_range(doc.lines.slice(rng, doc.text), rng)


def rename(doc: ChartDocument, position: Position, new_name: str) -> RenameOutcome:
    """Rename the state, event or guard at `position` everywhere, or say why not."""
    if doc.blanked:  # a name on a line the index leaves out would keep its old spelling
        line = min(doc.blanked) + 1
        return RenameOutcome(
            refusal=f"the YAML does not parse (line {line}): rename once it does, so that "
            "no use of the name is missed"
        )
    return rename_at(doc, position, new_name)


def code_actions(
    doc: ChartDocument, range: Range, diagnostics: Sequence[Diagnostic]
) -> tuple[CodeAction, ...]:
    """Quick fixes for the findings of `diagnostics` (compile and lint) that touch `range`."""
    return actions_for(doc, range, diagnostics)

"""Completion items for names: one item, and the states a reference can name where it
stands (anywhere, a target from its source state, a child path below a state)."""

from __future__ import annotations

from statekit.compiler.model.relative_refs import (
    is_explicit,
    relative_form,
    shortest_target_text,
)
from statekit.lsp.document import ChartDocument
from statekit.lsp.hover import describe
from statekit.lsp.index import Index, Kind
from statekit.lsp.records import CompletionItem, CompletionKind, Range, TextEdit


def item(
    label: str, kind: CompletionKind, detail: str, rng: Range, documentation: str | None = None
) -> CompletionItem:
    return CompletionItem(
        label=label,
        kind=kind,
        detail=detail,
        edit=TextEdit(range=rng, new_text=label),
        documentation=documentation,
    )


def state_items(
    doc: ChartDocument, index: Index, rng: Range, typed: str, *, activatable: bool
) -> list[CompletionItem]:
    items = []
    for path, info in index.states.items():
        if not path or (activatable and info.history):
            continue
        label = index.shortest_reference(path)
        if typed and not label.startswith(typed):
            parts = path.split(".")
            longer = [".".join(parts[i:]) for i in range(len(parts))]
            label = next((s for s in longer if s.startswith(typed)), label)
        items.append(
            item(
                label, CompletionKind.CLASS, path, rng, documentation(doc, index, Kind.STATE, path)
            )
        )
    return items


def target_items(
    doc: ChartDocument, index: Index, rng: Range, typed: str, source: str, *, activatable: bool
) -> list[CompletionItem]:
    """The states a target of `source` can name, each by the shortest text that names it
    from there (a sibling by its bare name); typing `.` or `^` asks for the explicit forms."""
    items = []
    for path, info in index.states.items():
        if not path or (activatable and info.history):
            continue
        if is_explicit(typed):
            label = relative_form(path, source)
        else:
            label = shortest_target_text(
                path, source, lambda text: index.resolve_target(text, source)
            )
            if typed and not label.startswith(typed):
                parts = path.split(".")
                longer = [".".join(parts[i:]) for i in range(len(parts))]
                label = next(
                    (
                        s
                        for s in longer
                        if s.startswith(typed) and index.resolve_target(s, source) == path
                    ),
                    label,
                )
        items.append(
            item(
                label, CompletionKind.CLASS, path, rng, documentation(doc, index, Kind.STATE, path)
            )
        )
    return items


def child_items(doc: ChartDocument, index: Index, scope: str, rng: Range) -> list[CompletionItem]:
    items = []
    prefix = f"{scope}." if scope else ""
    for path, info in index.states.items():
        if path.startswith(prefix) and path != scope and not info.history:
            label = path[len(prefix) :]
            items.append(
                item(
                    label,
                    CompletionKind.CLASS,
                    path,
                    rng,
                    documentation(doc, index, Kind.STATE, path),
                )
            )
    return items


def documentation(doc: ChartDocument, index: Index, kind: Kind, key: str) -> str | None:
    if index is doc.index:
        return describe(doc, kind, key)
    return None

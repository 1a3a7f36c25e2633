"""Completion of definitions (a bare name), table names (after `tables.`) and table keys
(inside `tables.<name>[`), where an expression is typed."""

from __future__ import annotations

import re

from statekit.compiler.model.declarations import mapping_items
from statekit.compiler.model.declarations import text as scalar_text
from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.lsp.completion_items import documentation, item
from statekit.lsp.document import ChartDocument
from statekit.lsp.index import Index, Kind
from statekit.lsp.records import CompletionItem, CompletionKind, Position, Range

_KEY_OPEN = re.compile(r"""\btables\s*\.\s*(\w+)\s*\[\s*(['"]?)[^\]'"]*$""")
_NAME_OPEN = re.compile(r"\btables\s*\.\s*\w*$")
MAX_KEY_ITEMS = 200
"""Most keys offered for one table (a large table's first ones)."""


def table_items(
    doc: ChartDocument, index: Index, before: str, rng: Range, typed: str
) -> list[CompletionItem] | None:
    """Table keys inside `tables.<name>[`, table names after `tables.`; None elsewhere."""
    key_open = _KEY_OPEN.search(before)
    if key_open is not None:
        quoted = bool(key_open.group(2))
        return [
            item(
                label if quoted or not isinstance(key, str) else repr(key),
                CompletionKind.CONSTANT,
                f"key of tables.{key_open.group(1)}",
                rng,
            )
            for key, label in _keys(doc, index, key_open.group(1))
        ]
    if _NAME_OPEN.search(before) is not None:
        after_dot = Position(rng.start.line, rng.start.character + typed.rfind(".") + 1)
        return [_table(doc, index, name, Range(after_dot, rng.end)) for name in _tables(index)]
    return None


def definition_items(doc: ChartDocument, index: Index, rng: Range) -> list[CompletionItem]:
    """Every definition by its name, and every table as `tables.<name>`."""
    items = []
    for decl in index.declarations:
        if decl.kind is Kind.DEFINITION:
            detail = str(decl.node.value) if isinstance(decl.node, ScalarNode) else "definition"
            items.append(
                item(
                    decl.key,
                    CompletionKind.VARIABLE,
                    detail,
                    rng,
                    documentation(doc, index, Kind.DEFINITION, decl.key),
                )
            )
    for name in _tables(index):
        table = _table(doc, index, name, rng)
        items.append(
            CompletionItem(
                label=f"tables.{name}",
                kind=table.kind,
                detail=table.detail,
                edit=type(table.edit)(range=rng, new_text=f"tables.{name}"),
                documentation=table.documentation,
            )
        )
    return items


def _tables(index: Index) -> list[str]:
    return [d.key for d in index.declarations if d.kind is Kind.TABLE]


def _table(doc: ChartDocument, index: Index, name: str, rng: Range) -> CompletionItem:
    return item(
        name, CompletionKind.MODULE, "table", rng, documentation(doc, index, Kind.TABLE, name)
    )


def _keys(doc: ChartDocument, index: Index, name: str) -> list[tuple[object, str]]:
    """The table's keys (the compiled ones when the chart compiles), each with its text."""
    chart = doc.chart
    table = chart.tables.get(name) if chart is not None else None
    if table is not None:
        keys: list[object] = list(table.key.enum or table.entries)
        return [(k, str(k)) for k in keys[:MAX_KEY_ITEMS]]
    decl = index.declaration_of(Kind.TABLE, name)
    node = decl.node if decl is not None else None
    if not isinstance(node, MappingNode):
        return []
    integer = scalar_text(node.get("key")) == "integer"
    out: list[tuple[object, str]] = []
    for key, _ in mapping_items(node.get("entries")):
        text = str(key.value)
        out.append((int(text) if integer and text.lstrip("-").isdigit() else text, text))
    return out[:MAX_KEY_ITEMS]

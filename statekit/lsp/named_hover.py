"""Hover text of a definition (its expression and inferred type) and of a table (its key and
value types and its entries), in Markdown through `statekit.compiler.markdown_text`."""

from __future__ import annotations

from statekit.compiler.expressions.lookup_table import LookupTable, shown_key
from statekit.compiler.markdown_text import markdown_code as code
from statekit.compiler.markdown_text import markdown_text
from statekit.compiler.model.declarations import mapping_items
from statekit.compiler.model.declarations import text as scalar_text
from statekit.compiler.model.timers import format_delay
from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.lsp.document import ChartDocument
from statekit.lsp.names import Declaration

MAX_SHOWN_ENTRIES = 20
"""Most entries a table's hover lists (then a count of the rest)."""


def describe_definition(doc: ChartDocument, decl: Declaration) -> str:
    """`**definition** overdue: boolean` and the expression it stands for."""
    chart = doc.chart
    named = chart.definitions.get(decl.key) if chart is not None else None
    kind = named.expression.type.describe() if named is not None else "type known once it compiles"
    lines = [f"**definition** {code(decl.key)}: {markdown_text(kind)}"]
    if isinstance(decl.node, ScalarNode) and decl.node.value is not None:
        lines.append(f"= {code(str(decl.node.value))}")
    return "\n".join(lines)


def describe_table(doc: ChartDocument, decl: Declaration) -> str:
    """`**table** tables.sla: key → value`, its entries (the first few) and its default."""
    chart = doc.chart
    table = chart.tables.get(decl.key) if chart is not None else None
    if table is not None:
        return _compiled(table)
    node = decl.node
    lines = [f"**table** {code('tables.' + decl.key)}"]
    if isinstance(node, MappingNode):
        entries = list(mapping_items(node.get("entries")))
        for key, value in entries[:MAX_SHOWN_ENTRIES]:
            shown = value.value if isinstance(value, ScalarNode) else "…"
            lines.append(f"- {code(str(key.value))}: {code(str(shown))}")
        if len(entries) > MAX_SHOWN_ENTRIES:
            lines.append(f"- … {len(entries) - MAX_SHOWN_ENTRIES} more")
        description = scalar_text(node.get("description"))
        if description:
            lines += ["", markdown_text(description)]
    return "\n".join(lines)


def _compiled(table: LookupTable) -> str:
    value = "duration" if table.duration else table.value.describe()
    lines = [
        f"**table** {code('tables.' + table.name)}: "
        f"{markdown_text(table.key_text())} → {markdown_text(value)}"
    ]
    entries = list(table.entries.items())
    for key, entry in entries[:MAX_SHOWN_ENTRIES]:
        lines.append(f"- {code(shown_key(key))}: {code(_shown_entry(table, entry))}")
    if len(entries) > MAX_SHOWN_ENTRIES:
        lines.append(f"- … {len(entries) - MAX_SHOWN_ENTRIES} more")
    if table.has_default:
        lines.append(f"default: {code(_shown_entry(table, table.default))}")
    if table.description:
        lines += ["", markdown_text(table.description)]
    return "\n".join(lines)


def _shown_entry(table: LookupTable, entry: object) -> str:
    """An entry as written: a duration table's milliseconds as a delay literal (`3d`)."""
    if table.duration and type(entry) is int and entry >= 0:
        return format_delay(entry)
    return shown_key(entry)

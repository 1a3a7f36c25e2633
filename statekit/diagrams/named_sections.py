"""The sections of a chart's docs page for its `define:` and `tables:`: each definition
with its expression and inferred type, and each table with its key, value type, entries
as written (durations as `3d`), default and description. A chart with neither gets no
section, so its page stays as it was. Every value from the chart goes through
`markdown_code` or `markdown_text`. Pure: the same chart gives the same lines."""

from __future__ import annotations

from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.ir import CompiledChart
from statekit.compiler.markdown_text import markdown_code, markdown_text
from statekit.compiler.model.table_text import value_text, value_type_text


def named_sections(chart: CompiledChart) -> list[str]:
    """The Markdown lines of the Definitions and Tables sections (none for a chart
    without them)."""
    out: list[str] = []
    if chart.definitions:
        out += ["## Definitions", "", "| name | expression | type |", "|---|---|---|"]
        for name, named in chart.definitions.items():
            source = " ".join(named.expression.source.split())
            kind = named.expression.type.describe()
            out.append(
                f"| {markdown_code(name)} | {markdown_code(source)} | {markdown_text(kind)} |"
            )
    if chart.tables:
        out += [*([""] if out else []), "## Tables"]
        for name, table in chart.tables.items():
            out += ["", *_table(name, table)]
    return out


def _table(name: str, table: LookupTable) -> list[str]:
    key = f"ctx.{table.key_field}" if table.key_field else table.key.describe()
    default = markdown_code(value_text(table, table.default)) if table.has_default else "none"
    out = [
        f"### {markdown_text(name)}",
        "",
        f"Key: {markdown_code(key)} · value: {markdown_code(value_type_text(table))} · "
        f"default: {default}",
    ]
    if table.description:
        out += ["", markdown_text(table.description)]
    out += ["", "| key | value |", "|---|---|"]
    out += [
        f"| {markdown_code(str(k))} | {markdown_code(value_text(table, v))} |"
        for k, v in table.entries.items()
    ]
    return out

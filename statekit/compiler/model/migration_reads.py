"""What a migration's `context:` expression cannot read, found from this chart alone.

A migration's context expressions are evaluated against the earlier version's context
when an instance is migrated (`statekit.engine.state_migration`), so they are typed
there. One thing is known from the new chart already: neither its definitions
(`define:`) nor its tables (`tables.<name>[key]`) exist in that earlier context. A bare
name this chart defines and every `tables.` read are reported here, each at its own
columns; the rest (context fields, types, syntax) is checked at migration time.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Collection, Iterator

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.durations import find_durations
from statekit.compiler.expressions.positions import ExpressionPositions

NOT_IN_MIGRATIONS = (
    "definitions and tables are not available in a migration's context: "
    "(it reads the earlier version's context)"
)
"""Why a migration's `context:` cannot read a definition or a table, as messages say it."""
MIGRATION_READS = "only ctx.<field>, literals and now can be read"
"""What a migration's `context:` can read, as messages say it."""


def unavailable_reads(
    source: str, span: SourceSpan, definitions: Collection[str]
) -> Iterator[tuple[str, SourceSpan]]:
    """(what is read, its span) for each definition or table `source` reads; nothing
    when it does not parse (the migration reports that with the earlier context)."""
    positions = ExpressionPositions(source, span)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(find_durations(positions.text).text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_name(node.value, "tables"):
            yield f"tables.{node.attr}", positions.span_of(node)
        elif isinstance(node, ast.Name) and node.id in definitions:
            yield f"definition '{node.id}'", positions.span_of(node)


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name

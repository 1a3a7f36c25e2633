"""The check of a record field read in expressions: `x.<name>`, with its type.

A record is a context or payload field declared `{type: record, fields: {...}}`. Its
fields are read by name (`ctx.address.city`, `event.to.zip`, `item.city` in a
`foreach` over a list of records); a name that is not one of the record's fields is an
`expression-type` error that lists them (or names the closest one). `==`/`!=` compare
two records of one type as whole values (`type_relations.comparison_problem`).
"""

from __future__ import annotations

import ast
import difflib

from statekit.compiler.expressions.checker_core import CheckerCore
from statekit.compiler.expressions.tree import ExprNode, FieldRead
from statekit.compiler.rules import expression_type, expression_unsafe


class RecordChecks(CheckerCore):
    """Field reads of records."""

    def _record_field(self, node: ast.Attribute) -> ExprNode | None:
        """`x.<attr>` where `x` is any expression of a record type."""
        value = self.visit(node.value)
        if value is None:
            return None
        fields = value.type.fields
        if fields is None:
            message = (
                f"attribute access '{node.attr}' is not allowed: {self.segment(node.value)}"
                f" is {value.type.describe()}, not a record"
            )
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if value.type.nullable:
            message = f"{self.segment(node.value)} may be null: test it with 'is not None' first"
            self.report(expression_type.SLUG, node.value, message)
            return None
        found = value.type.field(node.attr)
        if found is None:
            names = [name for name, _ in fields]
            close = difflib.get_close_matches(node.attr, names, n=1)
            note = f"did you mean '{close[0]}'?" if close else f"fields: {', '.join(names)}"
            message = f"record {self.segment(node.value)} has no field '{node.attr}'"
            self.report(expression_type.SLUG, node, message, (note,))
            return None
        return FieldRead(value=value, name=node.attr, type=found)

"""The check of a table read, `tables.<name>[key]`: the only subscript of the language.

The key's type must be the table's key type, and the read must not miss: every value
the key can take has an entry (an enum-typed key within the table's keys, a literal
among them) or the table has a `default:`. Whatever passes compiles to one dictionary
look-up that cannot raise `KeyError`.
"""

from __future__ import annotations

import ast
import difflib
import itertools

from statekit.compiler.expressions.list_checks import ListChecks
from statekit.compiler.expressions.lookup_table import LookupTable, shown_key
from statekit.compiler.expressions.tree import ExprNode, Literal, TableRead
from statekit.compiler.rules import expression_type, expression_unsafe, table_incomplete

_SHOWN_KEYS = 8  # most missing keys a message lists


class TableChecks(ListChecks):
    """Reads of the chart's lookup tables (`tables:`)."""

    def _subscript(self, node: ast.Subscript) -> ExprNode | None:
        base = node.value
        if not (
            isinstance(base, ast.Attribute)
            and isinstance(base.value, ast.Name)
            and base.value.id == "tables"
        ):
            return self._list_index(node)
        table = self._table(base)
        if isinstance(node.slice, ast.Slice | ast.Tuple):
            self.report(expression_unsafe.SLUG, node.slice, "a table is read with one key")
            return None
        key = self.visit(node.slice)
        if table is None or key is None:
            return None
        if not self._key_fits(table, key, node.slice):
            return None
        return TableRead(table=table.name, key=key, type=table.value, lookup=table)

    def _table(self, node: ast.Attribute) -> LookupTable | None:
        """The declared table `tables.<name>` names, or None after reporting."""
        table = self.scope.tables.get(node.attr)
        if table is not None:
            return table
        if self.scope.no_definitions is not None:
            message = f"tables.{node.attr}: {self.scope.no_definitions}"
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if node.attr in self.scope.broken_tables:
            return None  # its own errors are reported at the table
        declared = list(self.scope.tables)
        close = difflib.get_close_matches(node.attr, declared, n=1) if len(declared) <= 1000 else []
        notes = (
            (f"did you mean 'tables.{close[0]}'?",)
            if close
            else (f"declared tables: {', '.join(declared[:_SHOWN_KEYS]) or 'none'}",)
        )
        self.report(expression_type.SLUG, node, f"unknown table '{node.attr}'", notes)
        return None

    def _table_without_key(self, node: ast.Attribute) -> None:
        """`tables.<name>` outside a subscript."""
        if node.attr in self.scope.tables or node.attr in self.scope.broken_tables:
            message = f"a table is read with a key: tables.{node.attr}[<key>]"
            self.report(expression_unsafe.SLUG, node, message)
        else:
            self._table(node)

    def _key_fits(self, table: LookupTable, key: ExprNode, key_ast: ast.expr) -> bool:
        """Whether `key` is of the table's key type and cannot miss (else reports)."""
        wanted = table.key
        got = key.type
        shown = self.segment(key_ast)
        name = f"table '{table.name}'"
        if isinstance(key, Literal):
            if got.base is not wanted.base or key.value not in table.entries:
                keys = ", ".join(shown_key(k) for k in itertools.islice(table.entries, _SHOWN_KEYS))
                more = ", ..." if len(table.entries) > _SHOWN_KEYS else ""
                self.report(
                    expression_type.SLUG,
                    key_ast,
                    f"{name} has no key {shown}",
                    (f"its keys: {keys}{more}",),
                )
                return False
            return True
        plain_into_enum = wanted.enum is not None and got.enum is None
        if got.base is not wanted.base or got.nullable or plain_into_enum:
            notes = ("declare the key's field with the same enum",) if plain_into_enum else ()
            self.report(
                expression_type.SLUG,
                key_ast,
                f"{name} is keyed by {table.key_text()}, but {shown} is {got.describe()}",
                notes,
            )
            return False
        if table.has_default:
            return True
        if got.enum is None:
            self.report(
                table_incomplete.SLUG,
                key_ast,
                f"{name} has no default for keys it does not list, and {shown} can be any "
                f"{got.base.value}",
                ("give the table a default:, or declare the key's field with an enum",),
            )
            return False
        missing = [v for v in got.enum if v not in table.entries]
        if missing:
            listed = ", ".join(shown_key(v) for v in missing[:_SHOWN_KEYS])
            more = f" and {len(missing) - _SHOWN_KEYS} more" if len(missing) > _SHOWN_KEYS else ""
            self.report(
                table_incomplete.SLUG,
                key_ast,
                f"{name} has no entry for {listed}{more}, which {shown} can be",
                ("add the entries, or give the table a default:",),
            )
            return False
        return True

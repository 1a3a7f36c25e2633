"""`assign: {address.city: <expr>}`: an assignment to a field of a record in context.

The key names a context field of a record type and a path of its fields; the value is
checked against the type of the last one. The assignment stores a new record in the
context field (`RecordWith` nodes, one per level of the path): the old record is never
changed, and the engine, the evidence and the analysis see an ordinary assignment of
the whole field (its text in the docs and `explain`: `customer := ctx.customer with
address.city = event.city`).
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.closures import compile_tree
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.tree import ContextRef, ExprNode, FieldRead, RecordWith
from statekit.compiler.ir import FieldDecl
from statekit.compiler.rules import expression_type
from statekit.compiler.value_types import ValueType


def path_target(decl: FieldDecl, path: tuple[str, ...], span: SourceSpan) -> ValueType | Diagnostic:
    """The type of the field at `path` inside the record field `decl`, or the error
    (not a record, a nullable record, no such field) positioned at the key."""
    t = decl.type
    written = decl.name
    for name in path:
        if t.fields is None:
            return _error(f"assign to ctx.{written}.{name}: ctx.{written} is not a record", span)
        if t.nullable:
            message = f"assign to ctx.{written}.{name}: ctx.{written} may be null"
            return _error(message, span, "assign a whole record to it instead")
        found = t.field(name)
        if found is None:
            names = [n for n, _ in t.fields]
            close = difflib.get_close_matches(name, names, n=1)
            note = f"did you mean '{close[0]}'?" if close else f"fields: {', '.join(names)}"
            return _error(f"assign to ctx.{written}: record has no field '{name}'", span, note)
        t, written = found, f"{written}.{name}"
    return t


def field_assignment(decl: FieldDecl, path: tuple[str, ...], value: Expression) -> Expression:
    """The assignment of `value` to the field at `path` as one of the whole record field
    (`path_target` has accepted the path)."""
    tree = _with(ContextRef(field=decl.name, type=decl.type), path, value.tree)
    # what the docs, `explain` and the evidence show as the assigned value
    source = f"ctx.{decl.name} with {'.'.join(path)} = {value.source}"
    return replace(value, source=source, tree=tree, type=decl.type, evaluate=compile_tree(tree))


def _with(record: ExprNode, path: tuple[str, ...], value: ExprNode) -> ExprNode:
    name, rest = path[0], path[1:]
    if rest:
        inner_type = record.type.field(name)
        assert inner_type is not None
        value = _with(FieldRead(value=record, name=name, type=inner_type), rest, value)
    return RecordWith(record=record, name=name, value=value, type=record.type)


def _error(message: str, span: SourceSpan, *notes: str) -> Diagnostic:
    return Diagnostic(
        slug=expression_type.SLUG, severity=Severity.ERROR, message=message, span=span, notes=notes
    )

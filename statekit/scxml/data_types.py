"""The typed context of an SCXML document: each `<data>` as a statekit context field.

SCXML's datamodel is untyped; a statekit context field has one type. The import
gives each `<data>` the type its values say, and refuses where they disagree:

- a literal (`expr="0"`, `'text'`, `true`) is a field of that type with that default;
- a constant expression (literals, `_name` and `<data>` declared before it: SCXML
  binds them in document order) is evaluated here, by statekit's own expression
  evaluator, into the field's default;
- no value (SCXML's `undefined`) is a nullable field defaulting to null, whose type is
  the one every value written to it has: an `<assign>`'s expression (typed by
  statekit's compiler), a `<send idlocation>`'s generated id (a string). Writes that
  disagree (an integer here, a string there) are refused at the later one. One that
  nothing writes is always null: it is declared a nullable string (a read that needs
  another type is then the compiler's positioned error).

A `<data>` nothing writes is a constant: what statekit needs constant (a `<send>`'s
event name, id and delay) may be computed from it (`constant_value`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, NoEvent, TypedEvent
from statekit.compiler.expressions.tree import ContextRef, iter_nodes
from statekit.compiler.value_types import NUMBER, BaseType, ValueType
from statekit.scxml.document import Element, ScxmlError
from statekit.scxml.null_data import always_null, null_types

Translate = Callable[[Element, str], str]
"""An SCXML expression (the element, its text) in statekit's language; an `ScxmlError`
naming what has no equivalent."""
Refuse = Callable[[Element, str], ScxmlError]
"""The positioned error for a message at an element."""


@dataclass(frozen=True)
class DataField:
    """One `<data>` as a context field; `constant` when nothing in the document writes it."""

    name: str
    type: ValueType
    default: Any
    constant: bool
    element: Element
    at_start: str | None = None
    """The value's expression when it reads the instance (`_sessionid`): the field then
    holds its type's zero value until the chart's start assigns it (`start_binding`)."""

    def spec(self) -> dict[str, Any]:
        """The field spec the chart declares."""
        out = type_spec(self.type)
        out["default"] = self.default
        return out


def type_spec(kind: ValueType) -> dict[str, Any]:
    """The field spec of `kind` without a default (a record's with its fields')."""
    out: dict[str, Any] = {"type": kind.base.value}
    if kind.items is not None:
        out["items"] = kind.items.base.value
    if kind.fields is not None:  # (a context record's fields each need a default)
        out["fields"] = {name: _field_spec(sub) for name, sub in kind.fields}
    if kind.nullable:
        out["nullable"] = True
    return out


def _field_spec(kind: ValueType) -> dict[str, Any]:
    out = type_spec(kind)
    if kind.fields is None and not kind.nullable:
        out["default"] = zero_value(kind)
    return out


@dataclass(frozen=True)
class Write:
    """A value written to the `<data>` named `location`: an expression, or (no `expr`)
    a value of `kind` (a generated id is a string)."""

    location: str
    element: Element
    expr: str | None = None
    kind: ValueType | None = None


@dataclass(frozen=True)
class DataProblem:
    """Why a `<data>`'s type cannot be decided, at an element."""

    element: Element
    message: str


_LITERAL_BASES = {int: BaseType.INTEGER, float: BaseType.NUMBER, str: BaseType.STRING}


def typed_fields(
    data: list[tuple[Element, str | None]],
    writes: list[Write],
    translate: Translate,
    refuse: Refuse,
    event_fields: Mapping[str, ValueType] | None = None,
    compared: Mapping[str, ValueType] | None = None,
) -> tuple[dict[str, DataField], list[DataProblem]]:
    """Each `<data>` (its element and its value expression, None for none) as a field,
    in document order, and the problems that leave a field with no value without a type
    (the caller reports them after the rest of the document: a feature the document
    cannot do without is the better reason). A value that is not a constant is refused.
    `event_fields`: the payload fields `_event.data.<field>` may read, typed;
    `compared`: the type each name is compared with (`null_data.compared_types`)."""
    written = {w.location for w in writes}
    fields: dict[str, DataField] = {}
    problems: list[DataProblem] = []
    untyped: list[Element] = []
    for element, text in data:
        name = element.attrs["id"]
        if text is None:
            untyped.append(element)
            continue
        bound = instance_bound(element, text, fields, translate)
        if bound is not None and bound[0].fields is not None:  # a record: null until then
            record = replace(bound[0], nullable=True)
            fields[name] = DataField(name, record, None, False, element, bound[1])
            continue
        if bound is not None:  # its value is the instance's: assigned at the start
            fields[name] = DataField(name, bound[0], zero_value(bound[0]), False, element, bound[1])
            continue
        value = _initial_value(element, text, fields, translate)
        if isinstance(value, DataProblem):
            raise refuse(value.element, value.message)
        literal = _literal_type(value)
        fields[name] = DataField(name, literal, value, name not in written, element)
    null = always_null(  # null whenever read: typed as compared (`null_data`)
        [e.attrs["id"] for e in untyped],
        [(w.location, w.expr) for w in writes],
        lambda name: _never_written(name, writes, fields),
    )
    unset = null_types(null, compared or {})
    rest = [e for e in untyped if e.attrs["id"] not in unset]
    inferred = _inferred_types(rest, writes, fields, translate, problems, event_fields or {}, unset)
    for element in untyped:
        name = element.attrs["id"]
        kind = unset.get(name) or inferred.get(name)
        if kind is None:
            if not any(p.element is element for p in problems):
                problems.append(
                    DataProblem(
                        element,
                        f"<data id={name!r}> with no value: nothing assigned to it says its type",
                    )
                )
            continue
        nullable = (
            replace(kind, nullable=True)  # a record keeps its fields
            if kind.fields is not None
            else ValueType(kind.base, nullable=True)
        )
        fields[name] = DataField(name, nullable, None, name not in written, element)
    order = [element.attrs["id"] for element, _ in data]
    return {n: fields[n] for n in order if n in fields}, problems


def _never_written(name: str, writes: list[Write], fields: Mapping[str, DataField]) -> bool:
    """Whether no write to `name` ever happens: none, or each the item of a `<foreach>`
    over a `<data>` that is no list (such a `<foreach>` fails before it assigns)."""
    for write in writes:
        if write.location != name:
            continue
        array = fields.get(write.element.attrs.get("array", "").strip())
        if write.element.tag != "foreach" or array is None or array.type.base is BaseType.LIST:
            return False
    return True


def instance_bound(
    element: Element, text: str, fields: Mapping[str, DataField], translate: Translate
) -> tuple[ValueType, str] | None:
    """(type, statekit expression) of a `<data>` value that reads the instance
    (`instance.id`, or a `<data>` that does); None for any other value."""
    source = translate(element, text)
    compiled = _compile(source, element, fields)
    if compiled is None or compiled.active_states():
        return None
    reads = {n.field for n in iter_nodes(compiled.tree) if isinstance(n, ContextRef)}
    if compiled.reads_instance() or any(fields[n].at_start is not None for n in reads):
        return compiled.type, source
    return None


def zero_value(kind: ValueType) -> Any:
    """The value a start-bound field holds before the start assigns it."""
    return {BaseType.STRING: "", BaseType.BOOLEAN: False, BaseType.NUMBER: 0.0}.get(kind.base, 0)


def _initial_value(
    element: Element, text: str, fields: Mapping[str, DataField], translate: Translate
) -> Any:
    name = element.attrs["id"]
    source = translate(element, text)
    compiled = _compile(source, element, fields)
    if compiled is None or compiled.active_states():
        return DataProblem(element, f"<data id={name!r}> with expr={text!r}: not a constant")
    try:
        value = compiled.evaluate({n: f.default for n, f in fields.items()}, {}, frozenset())
    except Exception as error:  # a constant that fails (1 / 0): SCXML's error.execution
        return DataProblem(element, f"<data id={name!r}> with expr={text!r}: fails ({error})")
    if value is None or type(value) not in (*_LITERAL_BASES, bool, list) or not _typed(value):
        return DataProblem(element, f"<data id={name!r}> with expr={text!r}: no typed value")
    return value


def _literal_type(value: Any) -> ValueType:
    """The type of a constant: a scalar, or a list of one scalar type (`_typed`)."""
    if type(value) is list:
        return ValueType(BaseType.LIST, items=_literal_type(value[0]))
    return ValueType(_LITERAL_BASES.get(type(value), BaseType.BOOLEAN))


def _typed(value: Any) -> bool:
    """A scalar, or a non-empty list of scalars of one type."""
    if type(value) is not list:
        return True
    kinds = {type(v) for v in value}
    return len(kinds) == 1 and kinds <= {*_LITERAL_BASES, bool}


def constant_value(
    source: str, element: Element, fields: Mapping[str, DataField]
) -> tuple[bool, Any]:
    """(True, its value) when the statekit expression `source` reads nothing but
    literals and constant `<data>`; (False, None) otherwise."""
    compiled = _compile(source, element, fields)
    if compiled is None or compiled.active_states():
        return False, None
    reads = {n.field for n in iter_nodes(compiled.tree) if isinstance(n, ContextRef)}
    if not all(fields[name].constant for name in reads):
        return False, None
    try:
        return True, compiled.evaluate({n: f.default for n, f in fields.items()}, {}, frozenset())
    except Exception:  # a failing constant is not a constant
        return False, None


def _inferred_types(
    untyped: list[Element],
    writes: list[Write],
    fields: Mapping[str, DataField],
    translate: Translate,
    problems: list[DataProblem],
    event_fields: Mapping[str, ValueType],
    unset: Mapping[str, ValueType],
) -> dict[str, ValueType]:
    """The type of each untyped `<data>`, to a fixed point: a write's expression is typed
    once every `<data>` it reads has a type (`Var1 = Var2` after `Var2 = 1`)."""
    names = {element.attrs["id"]: element for element in untyped}
    inferred: dict[str, ValueType] = {}
    for _ in range(len(names) + 1):
        known = {n: f.type for n, f in fields.items()} | dict(unset) | inferred
        seen: dict[str, tuple[ValueType, Element]] = {}
        for write in writes:
            if write.location not in names:
                continue
            kind = write.kind or _type_of(write, known, translate, event_fields)
            if kind is None or kind.base is BaseType.NULL:
                continue
            kind = ValueType(kind.base, fields=kind.fields)  # (a record keeps its fields)
            before = seen.get(write.location)
            if before is None:
                seen[write.location] = (kind, write.element)
                continue
            joined = _join(before[0], kind)
            if joined is None:
                element = write.element
                problems.append(
                    DataProblem(
                        element,
                        f"<data id={write.location!r}> with no value is written a "
                        f"{kind.describe()} here and a {before[0].describe()} at line "
                        f"{before[1].line}, column {before[1].column}: one type is needed",
                    )
                )
                return {}
            seen[write.location] = (joined, before[1])
        found = {name: kind for name, (kind, _) in seen.items()}
        if found == inferred:
            break
        inferred = found
    return inferred


def _type_of(
    write: Write,
    known: Mapping[str, ValueType],
    translate: Translate,
    event_fields: Mapping[str, ValueType],
) -> ValueType | None:
    if write.expr is None:
        return None
    try:
        source = translate(write.element, write.expr)
    except ScxmlError:  # refused where the write is translated, in document order
        return None
    scope = ExpressionScope(  # `_event.name` has its type wherever it can be read
        context=dict(known), event=TypedEvent(event_fields), resolve_state=lambda _ref, _span: 0
    )
    compiled = compile_expression(source, _span(write.element), scope)
    return compiled.type if isinstance(compiled, Expression) else None


def _join(a: ValueType, b: ValueType) -> ValueType | None:
    if a.base is b.base:
        return a
    if {a.base, b.base} == {BaseType.INTEGER, BaseType.NUMBER}:
        return NUMBER
    return None


def _compile(source: str, element: Element, fields: Mapping[str, DataField]) -> Expression | None:
    compiled = compile_expression(
        source, _span(element), _scope({n: f.type for n, f in fields.items()})
    )
    return compiled if isinstance(compiled, Expression) else None


def _scope(types: Mapping[str, ValueType]) -> ExpressionScope:
    return ExpressionScope(
        context=dict(types),
        event=NoEvent("an SCXML <data> value has no event"),
        resolve_state=lambda _ref, _span: 0,
    )


def _span(element: Element) -> SourceSpan:
    return SourceSpan("<scxml>", element.line, element.column, element.line, element.column + 1)

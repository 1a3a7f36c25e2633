"""Record fields in expressions: `x.name` reads a typed field (of a context or payload
record, a list element, a nested record), `==`/`!=` compare whole records, and an
unknown field or a read through a non-record is a positioned error."""

from __future__ import annotations

from typing import Any

import pytest

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, TypedEvent
from statekit.compiler.record_values import Record
from statekit.compiler.value_types import BOOLEAN, INTEGER, STRING, BaseType, ValueType

ADDRESS = ValueType(
    BaseType.RECORD,
    fields=(("city", STRING), ("zip", ValueType(BaseType.STRING, nullable=True))),
)
CUSTOMER = ValueType(
    BaseType.RECORD,
    fields=(("address", ADDRESS), ("name", STRING), ("visits", INTEGER)),
)
CONTEXT = {
    "customer": CUSTOMER,
    "home": ADDRESS,
    "maybe": ValueType(BaseType.RECORD, nullable=True, fields=ADDRESS.fields),
    "stops": ValueType(BaseType.LIST, items=ADDRESS),
    "n": INTEGER,
}
OSLO = Record({"city": "Oslo", "zip": "0150"})
CTX: dict[str, Any] = {
    "customer": Record({"address": OSLO, "name": "Ann", "visits": 2}),
    "home": OSLO,
    "maybe": None,
    "stops": [OSLO, Record({"city": "Bergen", "zip": None})],
    "n": 0,
}
PAYLOAD = {"to": Record({"city": "Oslo", "zip": "0150"})}
LINE, COLUMN = 3, 7


def _resolve(ref: str, span: SourceSpan) -> int | Diagnostic:
    return Diagnostic("unknown-state", Severity.ERROR, f"unknown state '{ref}'", span)


SCOPE = ExpressionScope(CONTEXT, TypedEvent({"to": ADDRESS}, "MOVE"), _resolve)


def _compile(source: str) -> Expression | tuple[Diagnostic, ...]:
    span = SourceSpan("chart.yaml", LINE, COLUMN, LINE, COLUMN + len(source))
    return compile_expression(source, span, SCOPE)


@pytest.mark.parametrize(
    ("source", "value", "kind"),
    [
        ("ctx.customer.name", "Ann", STRING),
        ("ctx.customer.address.city", "Oslo", STRING),
        ("ctx.customer.visits + 1", 3, INTEGER),
        ("event.to.zip", "0150", ValueType(BaseType.STRING, nullable=True)),
        ("_event.data.to.city", "Oslo", STRING),
        ("ctx.stops[1].city", "Bergen", STRING),
        ("ctx.stops[1].zip is None", True, BOOLEAN),
        ("ctx.customer.address", OSLO, ADDRESS),
        ("ctx.home == event.to", True, BOOLEAN),
        ("ctx.customer.address != ctx.stops[1]", True, BOOLEAN),
        ("ctx.home in ctx.stops", True, BOOLEAN),
        ("ctx.stops == [ctx.home, ctx.stops[1]]", True, BOOLEAN),
        ("ctx.home if ctx.n > 0 else event.to", OSLO, ADDRESS),
        (
            "ctx.maybe if ctx.n > 0 else ctx.home",
            OSLO,
            ValueType(BaseType.RECORD, nullable=True, fields=ADDRESS.fields),
        ),
    ],
)
def test_record_fields_read_typed_and_records_compare_whole(
    source: str, value: Any, kind: ValueType
) -> None:
    compiled = _compile(source)
    assert isinstance(compiled, Expression), compiled
    assert compiled.type == kind
    assert compiled.evaluate(CTX, PAYLOAD, frozenset()) == value


@pytest.mark.parametrize(
    ("source", "slug", "start", "message", "note"),
    [
        (
            "ctx.customer.nmae",
            "expression-type",
            0,
            "record ctx.customer has no field 'nmae'",
            "did you mean 'name'?",
        ),
        (
            "event.to.country",
            "expression-type",
            0,
            "record event.to has no field 'country'",
            "fields: city, zip",
        ),
        (
            "ctx.customer.name.first",
            "expression-unsafe",
            0,
            "ctx.customer.name is string, not a record",
            None,
        ),
        ("ctx.maybe.city", "expression-type", 0, "ctx.maybe may be null", None),
        ("ctx.home == ctx.customer", "expression-type", 0, "can never be true", None),
        (
            "ctx.home if ctx.n > 0 else ctx.customer",
            "expression-type",
            0,
            "incompatible types",
            None,
        ),
        ("ctx.home.__class__", "expression-unsafe", 0, "'__class__' is not allowed", None),
        ("1 + ctx.home.zip", "expression-type", 0, "may be null", None),
    ],
)
def test_a_bad_field_read_is_a_positioned_error(
    source: str, slug: str, start: int, message: str, note: str | None
) -> None:
    found = _compile(source)
    assert isinstance(found, tuple), f"{source!r} compiled"
    (diagnostic,) = found
    assert diagnostic.slug == slug
    assert message in diagnostic.message, diagnostic.message
    assert (diagnostic.span.line, diagnostic.span.column) == (LINE, COLUMN + start)
    if note is not None:
        assert note in diagnostic.notes, diagnostic.notes

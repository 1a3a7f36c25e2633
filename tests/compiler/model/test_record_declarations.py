"""Record fields compiled: their types and defaults, and each bad spec at its position."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text

from statekit.compiler.ir import Assign
from statekit.compiler.record_values import Record
from statekit.compiler.value_types import STRING, BaseType, ValueType

HEAD = """
statechart: r
context:
  customer:
    type: record
    fields:
      name: string
      address:
        type: record
        fields:
          city: string
          zip: {type: string, nullable: true}
      tags: {type: list, items: string}
  n: {type: integer, default: 0}
events:
  MOVE:
    to:
      type: record
      fields: {city: string, zip: {type: string, nullable: true}}
initial: a
states:
  a:
"""


def _chart(body: str) -> str:
    return HEAD + "\n".join("    " + line for line in body.strip("\n").split("\n")) + "\n"


def test_a_record_field_has_its_sorted_typed_fields_and_a_frozen_default() -> None:
    chart = chart_of(HEAD + "    {}\n")
    customer = chart.context["customer"]
    assert customer.type.base is BaseType.RECORD
    assert [name for name, _ in customer.type.fields or ()] == ["address", "name", "tags"]
    assert customer.type.field("name") == STRING
    assert customer.default == {"address": {"city": "", "zip": None}, "name": "", "tags": []}
    assert type(customer.default) is Record and type(customer.default["address"]) is Record
    (to,) = chart.events["MOVE"].fields
    assert to.type.field("zip") == ValueType(BaseType.STRING, nullable=True)
    assert not to.has_default


def test_an_explicit_record_default_is_checked_and_frozen() -> None:
    text = HEAD.replace(
        "      tags: {type: list, items: string}\n",
        "      tags: {type: list, items: string}\n"
        "    default: {name: Ann, address: {city: Oslo, zip: null}, tags: [vip]}\n",
    )
    default = chart_of(text + "    {}\n").context["customer"].default
    assert default == {"address": {"city": "Oslo", "zip": None}, "name": "Ann", "tags": ["vip"]}
    assert type(default) is Record


def _small(context: str, events: str = "{}") -> str:
    """A chart whose context is `context` (one field per line, lines 3 on)."""
    return (
        "statechart: s\ncontext:\n"
        + "".join(f"  {line}\n" for line in context.strip("\n").split("\n"))
        + f"events: {events}\ninitial: a\nstates:\n  a: {{}}\n"
    )


# (chart text, slug, line, column, words)
POSITIONED = [
    (_small("c: {type: record}"), "schema", 3, 6, "a record needs `fields:`"),
    (_small("c: {type: record, fields: {}}"), "schema", 3, 29, "fields"),
    (_small("c: {type: integer, fields: {a: string}}"), "schema", 3, 30, "needs `type: record`"),
    (_small("c: {type: record, fields: {a: strin}}"), "schema", 3, 33, "strin"),
    (
        _small("c: {type: record, fields: {a: {enum: [x, y]}}}"),
        "schema",
        3,
        33,
        "context field 'a' needs a default",
    ),
    (
        _small("c: {type: record, fields: {a: string}, default: {a: 1}}"),
        "schema",
        3,
        51,
        "default.a: expected string, got integer",
    ),
    (
        _small("c: {type: record, fields: {a: string, b: integer}, default: {a: x}}"),
        "schema",
        3,
        63,
        "missing field 'b'",
    ),
    (
        _small("c: {type: record, fields: {a: string}, default: {a: x, z: 1}}"),
        "schema",
        3,
        51,
        "unknown field(s) 'z'",
    ),
    (
        _small(
            "n: {type: integer, default: 0}",
            "{GO: {r: {type: record, fields: {a: {type: string, default: x}}}}}",
        ),
        "schema",
        4,
        69,
        "a payload record has exactly its fields",
    ),
    (
        HEAD + "    entry: [{assign: {customer.adress.city: \"'x'\"}}]\n",
        "expression-type",
        22,
        23,
        "record has no field 'adress'",
    ),
    (
        HEAD + "    entry: [{assign: {customer.name.x: \"'x'\"}}]\n",
        "expression-type",
        22,
        23,
        "ctx.customer.name is not a record",
    ),
    (
        HEAD + "    entry: [{assign: {customer.address.city: 1}}]\n",
        "expression-type",
        22,
        46,
        "expected string, got integer",
    ),
    (
        HEAD + '    entry: [{assign: {customer: "ctx.customer.address"}}]\n',
        "expression-type",
        22,
        34,
        "expected record {address: record",
    ),
]


@pytest.mark.parametrize(("text", "slug", "line", "column", "words"), POSITIONED)
def test_each_bad_record_spec_is_positioned(
    text: str, slug: str, line: int, column: int, words: str
) -> None:
    result = compile_text(text)
    assert result.chart is None
    found = [d for d in result.diagnostics if d.slug == slug]
    assert found, result.diagnostics
    assert words in found[0].message, found[0]
    assert (found[0].span.line, found[0].span.column) == (line, column), found[0]


def test_an_assign_to_a_record_field_is_an_assign_of_the_whole_record() -> None:
    chart = chart_of(HEAD + "    entry: [{assign: {customer.address.city: \"'Oslo'\"}}]\n")
    (effect,) = chart.states[1].entry
    assert isinstance(effect, Assign)
    ((name, expression),) = effect.assignments
    assert name == "customer"
    assert expression.source == "ctx.customer with address.city = 'Oslo'"
    assert expression.type == chart.context["customer"].type

"""Lookup tables (`tables:`): declared once, read as `tables.<name>[key]`, checked where they
are declared and where they are read so that a read never misses at run time."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.compiler.pipeline import compile_source
from statekit.compiler.serialize import chart_to_json
from statekit.engine.chart import Chart

CHART = """
statechart: ticket
context:
  priority: {enum: [low, normal, urgent], default: normal}
  level: {enum: [1, 2, 3], default: 1}
  code: {type: string, default: ""}
  channel: {enum: [mail, phone], default: mail}
  budget: {type: integer, default: 0}
  queue: {type: string, default: ""}
  maybe: {type: string, nullable: true}
events:
  GO: {kind: {enum: [mail, phone, chat]}}
tables:
{tables}
initial: open
states:
  open:
    on:
      GO:
        to: done
        do: [{assign: {budget: "{budget}", queue: "{queue}"}}]
  done: {final: true}
"""

TABLES = """\
  sla:
    key: ctx.priority
    value: duration
    entries: {low: 3d, normal: 1d, urgent: 4h}
  retries:
    key: {enum: [1, 2, 3]}
    value: integer
    entries: {1: 5, 2: 3, 3: 1}
  team:
    key: string
    value: string
    entries: {billing: finance, outage: ops}
    default: support
  strict:
    key: string
    value: string
    entries: {mail: inbox, phone: calls}
"""


def _source(budget: str, queue: str = "'x'", tables: str = TABLES) -> str:
    text = textwrap.dedent(CHART).lstrip("\n").replace("{tables}", tables.rstrip("\n"))
    return text.replace("{budget}", budget).replace("{queue}", queue)


def _errors(budget: str, queue: str = "'x'", tables: str = TABLES) -> list[str]:
    result = compile_source(_source(budget, queue, tables), "chart.yaml")
    roles = ("assign to ctx.budget: ", "assign to ctx.queue: ")
    return [
        f"{d.slug}: {d.message.removeprefix(roles[0]).removeprefix(roles[1])}"
        for d in result.errors
    ]


def _run(
    budget: str, queue: str, context: dict[str, object], kind: str = "mail"
) -> dict[str, object]:
    result = compile_source(_source(budget, queue), "chart.yaml")
    assert result.chart is not None, result.diagnostics
    chart = Chart(result.chart)
    done = chart.send(chart.start(context=context), "GO", {"kind": kind})
    assert done.applied
    return dict(done.state.context)


@pytest.mark.parametrize(
    ("priority", "ms"), [("low", 3 * 86_400_000), ("normal", 86_400_000), ("urgent", 4 * 3_600_000)]
)
def test_an_enum_keyed_read_is_the_entry_of_the_fields_value(priority: str, ms: int) -> None:
    context = _run("tables.sla[ctx.priority]", "'x'", {"priority": priority})
    assert context["budget"] == ms


@pytest.mark.parametrize(
    ("code", "queue"),
    [("billing", "finance"), ("outage", "ops"), ("hr", "support"), ("", "support")],
)
def test_a_string_keyed_read_gives_the_default_for_unlisted_keys(code: str, queue: str) -> None:
    assert _run("0", "tables.team[ctx.code]", {"code": code})["queue"] == queue


def test_integer_keys_and_literal_keys_and_event_keys() -> None:
    context = _run(
        "tables.retries[ctx.level] * 10 + tables.retries[2]",
        "tables.strict[ctx.channel]",
        {"level": 3, "channel": "phone"},
    )
    assert context == {**context, "budget": 13, "queue": "calls"}
    assert _run("0", "tables.team[event.kind]", {}, kind="chat")["queue"] == "support"


def test_the_read_is_one_lookup_in_the_chart_json() -> None:
    result = compile_source(_source("tables.sla[ctx.priority]"), "chart.yaml")
    assert result.chart is not None
    data = chart_to_json(result.chart, positions=False)
    assert data["tables"]["sla"]["entries"] == [
        ["low", 259200000],
        ["normal", 86400000],
        ["urgent", 14400000],
    ]
    (assign,) = data["transitions"][0]["effects"]
    assert "table" in str(assign)


@pytest.mark.parametrize(
    ("budget", "queue", "expected"),
    [
        (
            "tables.sla[ctx.code]",
            "'x'",
            "expression-type: table 'sla' is keyed by the values of ctx.priority, "
            "but ctx.code is string",
        ),
        (
            "tables.sla['medium']",
            "'x'",
            "expression-type: table 'sla' has no key 'medium'",
        ),
        (
            "tables.retries['1']",
            "'x'",
            "expression-type: table 'retries' has no key '1'",
        ),
        (
            "0",
            "tables.team['hr']",
            "expression-type: table 'team' has no key 'hr'",
        ),
        (
            "0",
            "tables.strict[ctx.code]",
            "table-incomplete: table 'strict' has no default for keys it does not list, "
            "and ctx.code can be any string",
        ),
        (
            "0",
            "tables.strict[event.kind]",
            "table-incomplete: table 'strict' has no entry for 'chat', which event.kind can be",
        ),
        (
            "0",
            "tables.team[ctx.maybe]",
            "expression-type: table 'team' is keyed by string, but ctx.maybe is string or null",
        ),
        (
            "tables.nope[ctx.priority]",
            "'x'",
            "expression-type: unknown table 'nope'",
        ),
        (
            "tables.sl[ctx.priority]",
            "'x'",
            "expression-type: unknown table 'sl'",
        ),
        (
            "tables.sla",
            "'x'",
            "expression-unsafe: a table is read with a key: tables.sla[<key>]",
        ),
        (
            "tables.sla[1:2]",
            "'x'",
            "expression-unsafe: a table is read with one key",
        ),
        (
            "ctx.budget[0]",
            "'x'",
            "expression-unsafe: subscripts are only allowed on a list or a declared table: "
            "tables.<name>[key], but ctx.budget is integer",
        ),
        (
            "len(tables)",
            "'x'",
            "expression-unsafe: 'tables' is only allowed as tables.<name>[key]",
        ),
        (
            "0",
            "tables.sla[ctx.priority]",
            "expression-type: expected string, got integer",
        ),
    ],
    ids=lambda v: v[:40],
)
def test_a_bad_read_is_a_positioned_error(budget: str, queue: str, expected: str) -> None:
    assert _errors(budget, queue) == [expected]


@pytest.mark.parametrize(
    ("tables", "expected"),
    [
        (
            "  t:\n    key: {enum: [a, b, c]}\n    value: integer\n    entries: {a: 1}\n",
            ["table-incomplete: table 't': no entry for 'b', 'c'"],
        ),
        (
            "  t:\n    key: {enum: [a, b]}\n    value: integer\n    entries: {a: 1, b: 2, x: 3}\n",
            ["schema: table 't': key 'x' is not one of 'a', 'b'"],
        ),
        (
            "  t:\n    key: {enum: [a]}\n    value: integer\n    entries: {a: 1}\n    default: 0\n",
            ["schema: table 't': a table keyed by an enum lists every value and has no default"],
        ),
        (
            "  t:\n    key: integer\n    value: integer\n    entries: {1: 1, 01: 2}\n",
            ["schema: table 't': key 1 is listed twice (first at line 16)"],
        ),
        (
            "  t:\n    key: integer\n    value: integer\n    entries: {one: 1}\n",
            ["schema: table 't': key 'one' is not an integer"],
        ),
        (
            "  t:\n    key: string\n    value: duration\n    entries: {a: 15min}\n",
            ["schema: table 't': '15min' is not a duration"],
        ),
        (
            "  t:\n    key: string\n    value: integer\n    entries: {a: x}\n    default: 1.5\n",
            ["schema: table 't': 'x' is not integer", "schema: table 't': 1.5 is not integer"],
        ),
        (
            "  t:\n    key: ctx.code\n    value: integer\n    entries: {a: 1}\n",
            [
                "schema: table 't': key: ctx.code needs an enum field that is not nullable; "
                "it is string"
            ],
        ),
        (
            "  t:\n    key: ctx.priorty\n    value: integer\n    entries: {a: 1}\n",
            ["schema: table 't': unknown context field 'priorty'"],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and not v.startswith(" ") else str(v)[:50],
)
def test_a_bad_table_is_a_positioned_error(tables: str, expected: list[str]) -> None:
    assert _errors("0", "'x'", tables) == expected


def test_a_large_enums_missing_keys_are_counted_past_the_first_eight() -> None:
    values = [f"v{i}" for i in range(100)]
    key = f"{{enum: [{', '.join(values)}]}}"
    tables = f"  t:\n    key: {key}\n    value: integer\n    entries: {{v0: 1}}\n"
    (error,) = _errors("0", "'x'", tables)
    listed = ", ".join(f"'v{i}'" for i in range(1, 9))
    assert error == f"table-incomplete: table 't': no entry for {listed} and 91 more"


KEYS = st.lists(
    st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=1, max_size=6, unique=True
)
VALUES = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), keys=KEYS)
def test_a_read_is_the_entry_or_the_default_for_every_table_and_key(
    data: st.DataObject, keys: list[str]
) -> None:
    entries = {k: data.draw(VALUES) for k in keys}
    default = data.draw(st.none() | VALUES)
    listed = ", ".join(f"{k}: {v}" for k, v in entries.items())
    enum = ", ".join(keys)
    tables = (
        f"  e:\n    key: {{enum: [{enum}]}}\n    value: integer\n    entries: {{{listed}}}\n"
        f"  s:\n    key: string\n    value: integer\n    entries: {{{listed}}}\n"
        + ("" if default is None else f"    default: {default}\n")
    )
    key = data.draw(st.sampled_from(keys))
    code = data.draw(st.sampled_from([*keys, "zz", ""]))
    text = _source("tables.e[ctx.k]", "'x'", tables).replace(
        "  budget:", f"  k: {{enum: [{enum}], default: {keys[0]}}}\n  budget:"
    )
    queue = "'x'" if default is None else "'x' if tables.s[ctx.code] == 0 else 'y'"
    result = compile_source(text.replace("queue: \"'x'\"", f'queue: "{queue}"'), "t.yaml")
    assert result.chart is not None, result.diagnostics
    chart = Chart(result.chart)
    done = chart.send(chart.start(context={"k": key, "code": code}), "GO", {"kind": "mail"})
    assert done.state.context["budget"] == entries[key]
    if default is not None:
        read = entries.get(code, default)
        assert done.state.context["queue"] == ("x" if read == 0 else "y")

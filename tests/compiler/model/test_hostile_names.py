"""The sandbox's hostile-input family, extended to definitions and tables: every hostile
form is a positioned diagnostic (never a traceback), and each is refused or compiled within
bounds that do not grow with the attack (no exponential tree, no recursion past a fixed
depth, no copy of a table per read)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart

HEAD = """\
statechart: hostile
context:
  i: {type: integer, default: 1}
  s: {type: string, default: ""}
  n: {type: integer, default: 7}
events:
  GO: {x: integer}
"""
TAIL = """\
initial: a
states:
  a:
    on:
      GO: {to: b, if: "GUARD"}
  b: {final: true}
"""


def _chart(define: str = "", tables: str = "", guard: str = "true") -> str:
    sections = ""
    if define:
        sections += "define:\n" + define
    if tables:
        sections += "tables:\n" + tables
    return HEAD + sections + TAIL.replace("GUARD", guard)


def _chain(length: int, step: Callable[[int], str]) -> str:
    lines = [f'  d{i}: "{step(i)}"' for i in range(length)]
    return "\n".join([*lines, f"  d{length}: ctx.i > 0"]) + "\n"


def _wide_table(size: int) -> str:
    entries = "".join(f"      {k}: {k * 3}\n" for k in range(size))
    return f"  big:\n    key: integer\n    value: integer\n    default: -1\n    entries:\n{entries}"


TABLE = "  t:\n    key: integer\n    value: integer\n    entries: {1: 2}\n    default: 0\n"
HUGE = "k" * 100_000
HUGE_ENTRY = (
    f"    entries:\n      ? {HUGE}\n      : 5\n"  # an implicit key has at most 1024 characters
)

HOSTILE: dict[str, tuple[str, set[str]]] = {
    "a chain of 10,000 definitions": (
        _chart(_chain(10_000, lambda i: f"d{i + 1}"), guard="d0"),
        {"expression-unsafe"},
    ),
    "definitions that nest past the depth bound": (
        _chart(_chain(30, lambda i: "not " * 4 + f"(d{i + 1})"), guard="d0"),
        {"expression-unsafe"},
    ),
    "definitions that double each other 40 times": (
        _chart(
            "  d0: ctx.i\n"
            + "".join(f'  d{k + 1}: "d{k} + d{k}"\n' for k in range(40))
            + '  big: "d40 > 0"\n',
            guard="big",
        ),
        {"expression-unsafe"},
    ),
    "one definition used a thousand times in one expression": (
        _chart(
            '  w: "ctx.i * ctx.n + ctx.i * ctx.n + ctx.i"\n', guard=" + ".join(["w"] * 600) + " > 0"
        ),
        {"expression-unsafe"},
    ),
    "mutual recursion": (_chart('  a: "b"\n  b: "a"\n', guard="a"), {"definition-cycle"}),
    "a cycle of three through a table read": (
        _chart(
            '  a: "tables.t[b] > 0"\n  b: "c"\n  c: "\'x\' if a else \'y\'"\n',
            "  t:\n    key: string\n    value: integer\n    entries: {x: 1}\n    default: 0\n",
            guard="a",
        ),
        {"definition-cycle"},
    ),
    "a definition named ctx": (_chart('  ctx: "1"\n'), {"schema"}),
    "a definition named event": (_chart('  event: "1"\n'), {"schema"}),
    "a definition named min": (_chart('  min: "1"\n'), {"schema"}),
    "a definition named tables": (_chart('  tables: "1"\n'), {"schema"}),
    "a definition named true": (_chart('  "true": "1"\n'), {"schema"}),
    "a definition named __import__": (
        _chart('  __import__: "1"\n', guard="__import__('os')"),
        {"expression-unsafe"},
    ),
    "a definition named like a dunder used as an attribute": (
        _chart('  __class__: "1"\n', guard="ctx.__class__ == 1"),
        {"expression-unsafe"},
    ),
    "a subscript of the context": (_chart(guard="ctx.s[0] == 'a'"), {"expression-unsafe"}),
    "a subscript of the event": (_chart(guard="event.x[0] == 1"), {"expression-unsafe"}),
    "a subscript of a definition": (
        _chart('  d: "ctx.s"\n', guard="d[0] == 'a'"),
        {"expression-unsafe"},
    ),
    "a subscript of a table read": (
        _chart(
            tables=TABLE.replace("value: integer", "value: string")
            .replace("2}", "b}")
            .replace("default: 0", "default: c"),
            guard="tables.t[1][0] == 'b'",
        ),
        {"expression-unsafe"},
    ),
    "a subscript of tables itself": (_chart(guard="tables['t'] == 1"), {"expression-unsafe"}),
    "a dunder of tables": (_chart(guard="tables.__class__ == 1"), {"expression-unsafe"}),
    "a slice of a table": (
        _chart(
            tables=TABLE,
            guard="tables.t[0:1] == 1",
        ),
        {"expression-unsafe"},
    ),
    "a huge key not in an enum table": (
        _chart(tables="  t:\n    key: {enum: [a]}\n    value: integer\n" + HUGE_ENTRY),
        {"schema"},
    ),
    "a huge integer key": (
        _chart(
            tables="  t:\n    key: integer\n    value: integer\n    default: 0\n"
            + HUGE_ENTRY.replace(HUGE, "9" * 4000)
        ),
        {"schema"},
    ),
    "an unknown table among a thousand": (
        _chart(
            tables="".join(TABLE.replace("  t:", f"  t{k}:") for k in range(1000)),
            guard="tables.nope[ctx.s] > 0",
        ),
        {"expression-type"},
    ),
}


def _errors(text: str) -> tuple[Diagnostic, ...]:
    return compile_source(text, "hostile.yaml").errors


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_form_is_a_positioned_diagnostic(name: str) -> None:
    text, slugs = HOSTILE[name]
    errors = _errors(text)
    assert errors, name
    assert {d.slug for d in errors} <= slugs, [str(d) + d.message for d in errors]
    lines = text.count("\n")
    for d in errors:
        assert 1 < d.span.line <= lines + 1, d  # at its place in the chart, not the file's start
        assert len(d.message) < 400 and all(len(n) < 400 for n in d.notes), d.message[:200]


def test_a_chain_of_definitions_is_reported_once_per_bound_not_per_link() -> None:
    errors = _errors(HOSTILE["a chain of 10,000 definitions"][0])
    assert 0 < len(errors) <= 10_000 // 32 + 1


def test_a_table_with_100k_entries_compiles_and_reads_in_one_lookup() -> None:
    result = compile_source(
        _chart(tables=_wide_table(100_000), guard="tables.big[event.x] == 3 * event.x"), "w.yaml"
    )
    assert result.chart is not None, result.diagnostics[:3]
    chart = Chart(result.chart)
    start = chart.start()
    assert chart.send(start, "GO", {"x": 99_999}).applied
    assert not chart.send(start, "GO", {"x": 100_000}).applied  # the default, -1


def test_a_huge_key_is_a_key_like_any_other() -> None:
    tables = "  t:\n    key: string\n    value: integer\n    default: 0\n" + HUGE_ENTRY
    result = compile_source(_chart(tables=tables, guard="tables.t[ctx.s] == 0"), "k.yaml")
    assert result.chart is not None
    chart = Chart(result.chart)
    assert not chart.send(chart.start(context={"s": HUGE}), "GO", {"x": 1}).applied  # 5
    assert chart.send(chart.start(context={"s": HUGE[1:]}), "GO", {"x": 1}).applied  # default

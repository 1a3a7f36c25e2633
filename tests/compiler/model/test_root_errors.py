"""One real error is reported once: a table, definition or named timer whose declaration
has an error is still known by its name, so its uses (a read, a `delay:`, a `pause:`, a
race, a migration's `timers:`) report nothing more — no `unknown table`,
`unknown-timer-id` or `unknown name` follow-ons."""

from __future__ import annotations

import pytest

from statekit.compiler.pipeline import compile_source

CHART = """\
statechart: ticket
context:
  priority: {enum: [low, normal, high], default: normal}
  age: {type: integer, default: 0}
events:
  WAIT: {}
  BACK: {}
define:
  budget: "tables.sla[ctx.priority]"
  late: "ctx.age > budget"
tables:
  sla:
    key: ctx.priority
    value: duration
    entries: {low: 3d, normal: 12h, high: 8h}
initial: working
states:
  working:
    after: [{id: sla, delay: budget, to: breached}]
    on: {WAIT: waiting}
    always: {to: breached, if: late}
    exit: [{emit: {type: Left, payload: {limit: "tables.sla[ctx.priority]"}}}]
  waiting:
    entry: [{pause: sla}]
    exit: [{resume: sla}]
    on: {BACK: working}
  breached: {final: true}
races:
  give_up: {events: [WAIT, "after(sla)@working"], in: working, decision: waiting wins}
version: 2
migrations:
  - {from: 1, timers: {"after(sla)@working": {to: "after(sla)@working", due: keep}}}
"""

ROOT_ERRORS = [
    # (what, replaced text, its replacement, the one expected (slug, line, words))
    (
        "incomplete table",
        "normal: 12h, high: 8h}",
        "normal: 12h}",
        ("table-incomplete", 15, "no entry for 'high'"),
    ),
    (
        "bad table value",
        "high: 8h}",
        "high: 8x}",
        ("schema", 15, "is not a duration"),
    ),
    (
        "bad table key type",
        "key: ctx.priority\n",
        "key: ctx.prio\n",
        ("schema", 13, "unknown context field 'prio'"),
    ),
    (
        "definition cycle",
        'budget: "tables.sla[ctx.priority]"',
        'budget: "tables.sla[ctx.priority] + late_by"\n  late_by: "budget"',
        ("definition-cycle", 10, "defined in terms of itself"),
    ),
    (
        "unknown table key",
        'budget: "tables.sla[ctx.priority]"',
        "budget: \"tables.sla['medium']\"",
        ("expression-type", 9, "has no key 'medium'"),
    ),
    (
        "bad delay literal",
        "delay: budget",
        "delay: 1.5h",
        ("schema", 19, "invalid delay literal '1.5h'"),
    ),
    (
        "bad timer entry",
        "{id: sla, delay: budget, to: breached}",
        "{id: sla, to: breached}",
        ("schema", 19, "needs 'delay'"),
    ),
    (
        "bad delay expression",
        "delay: budget",
        "delay: ctx.missing",
        ("expression-type", 19, "unknown context field 'missing'"),
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [case[1:] for case in ROOT_ERRORS],
    ids=[case[0] for case in ROOT_ERRORS],
)
def test_only_the_root_error_is_reported(
    old: str, new: str, expected: tuple[str, int, str]
) -> None:
    assert old in CHART
    result = compile_source(CHART.replace(old, new, 1), "ticket.yaml")
    assert result.chart is None
    found = [(d.slug, d.span.line, d.message) for d in result.diagnostics]
    slug, line, words = expected
    assert [(s, ln) for s, ln, _ in found] == [(slug, line)], found
    assert words in found[0][2], found


def test_the_chart_without_the_errors_compiles() -> None:
    result = compile_source(CHART, "ticket.yaml")
    assert result.chart is not None, result.diagnostics


def test_an_undeclared_table_and_timer_are_still_reported() -> None:
    text = CHART.replace('tables.sla[ctx.priority]"}}}', 'tables.slaa[ctx.priority]"}}}')
    text = text.replace("{resume: sla}", "{resume: sl}")
    found = [(d.slug, d.message) for d in compile_source(text, "ticket.yaml").diagnostics]
    assert [s for s, _ in found] == ["expression-type", "unknown-timer-id"], found
    assert "unknown table 'slaa'" in found[0][1] and "'sl'" in found[1][1], found

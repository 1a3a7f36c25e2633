"""Named timers (`id:` in a timer mapping) and a migration's `timers:`: the identity a
name gives, and the positioned errors of what the compiler can check."""

from __future__ import annotations

import textwrap

from statekit.compiler.pipeline import compile_source

BASE = """
statechart: sub
version: 2
events: {PAY: {}}
initial: grace
states:
  grace:
    on: {PAY: active}
    after:
{after}
  active: {final: true}
  expired: {final: true}
{migrations}
"""


def _compile(after: str, migrations: str = "") -> tuple[object, list[tuple[int, int, str]]]:
    text = textwrap.dedent(BASE).lstrip("\n").replace("{after}", after)
    result = compile_source(text.replace("{migrations}", migrations), "chart.yaml")
    problems = [(d.span.line, d.span.column, d.message) for d in result.diagnostics
                if d.severity.value == "error"]  # fmt: skip
    return result.chart, problems


def test_a_named_timers_identity_does_not_depend_on_its_delay() -> None:
    names = []
    for delay in ("7d", "10d", "1h30m"):
        chart, problems = _compile(f"      - {{id: grace, delay: {delay}, to: expired}}")
        assert problems == []
        names.append([t.name for t in chart.timers])  # type: ignore[attr-defined]
    assert names == [["after(grace)@grace"]] * 3


def test_an_unnamed_timers_identity_is_its_delay_and_state() -> None:
    chart, problems = _compile("      - {delay: 7d, to: expired}")
    assert problems == []
    assert [t.name for t in chart.timers] == ["after(7d)@grace"]  # type: ignore[attr-defined]


def test_entries_of_one_name_with_two_delays_are_an_error_at_the_second() -> None:
    _, problems = _compile(
        "      - {id: grace, delay: 7d, if: 'false', to: expired}\n"
        "      - {id: grace, delay: 8d, to: expired}"
    )
    ((line, column, message),) = problems
    assert (line, column) == (10, 9)
    assert "timer 'grace' of state 'grace' has another delay here than at line 9" in message


def test_a_migration_to_a_timer_the_chart_lacks_is_an_error_at_its_to() -> None:
    _, problems = _compile(
        "      - {id: grace, delay: 7d, to: expired}",
        'migrations:\n  - from: 1\n    timers: {"after(7d)@grace": {to: "after(8d)@grace"}}',
    )
    ((line, column, message),) = problems
    assert (line, column) == (14, 38)
    assert (
        "'after(8d)@grace' is not a timer of this version (timers: after(grace)@grace)" in message
    )


def test_a_timer_mapping_must_be_drop_or_to_and_due() -> None:
    _, problems = _compile(
        "      - {id: grace, delay: 7d, to: expired}",
        'migrations:\n  - from: 1\n    timers: {"after(7d)@grace": {due: later}}',
    )
    assert [p[0] for p in problems] == [14]

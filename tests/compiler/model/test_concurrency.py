"""`producers:` and `races:`: compiled as written, checked against the schema and the events."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text

from statekit.compiler.serialize import chart_to_json

BASE = """
statechart: lesson
version: 1
initial: running
events: {TaskCompleted: {}, TaskCancelled: {}, TaskStarted: {}}
states:
  running:
    on:
      TaskCompleted: completed
      TaskCancelled: cancelled
  completed: {final: true}
  cancelled: {final: true}
"""

DECLARED = (
    BASE
    + """
producers:
  worker: [TaskStarted, TaskCompleted]
  user: [TaskCancelled]
races:
  complete_vs_cancel:
    events: [TaskCompleted, TaskCancelled]
    in: running
    decision: Whichever commits first wins.
  everywhere: {events: [TaskStarted, TaskCancelled], decision: The cancel wins.}
"""
)


def test_producers_and_races_are_compiled_as_written() -> None:
    chart = chart_of(DECLARED)
    assert [(p.name, p.events) for p in chart.producers] == [
        ("worker", ("TaskStarted", "TaskCompleted")),
        ("user", ("TaskCancelled",)),
    ]
    first, second = chart.races
    assert (first.name, first.events, first.state_ref, first.decision) == (
        "complete_vs_cancel",
        ("TaskCompleted", "TaskCancelled"),
        "running",
        "Whichever commits first wins.",
    )
    assert first.state == chart.state("running").id
    assert (first.span.line, first.event_spans[1].line) == (17, 18)
    assert first.state_span is not None and first.state_span.line == 19
    assert (second.state_ref, second.state, second.state_span) == (None, None, None)


def test_they_change_no_answer_so_not_the_digest() -> None:
    plain, declared = chart_of(BASE), chart_of(DECLARED)
    assert plain.digest == declared.digest
    data = chart_to_json(declared)
    assert data["producers"] == {
        "worker": ["TaskStarted", "TaskCompleted"],
        "user": ["TaskCancelled"],
    }
    assert data["races"]["everywhere"] == {
        "events": ["TaskStarted", "TaskCancelled"],
        "in": None,
        "decision": "The cancel wins.",
    }
    assert "producers" not in chart_to_json(plain)


def test_unknown_race_names_compile_for_the_lint_rule_to_report() -> None:
    chart = chart_of(
        BASE + "races:\n  r: {events: [TaskCompleted, Nope], in: nowhere, decision: x}\n"
    )
    (race,) = chart.races
    assert (race.events, race.state_ref, race.state) == (
        ("TaskCompleted", "Nope"),
        "nowhere",
        None,
    )


BAD = {
    "producer names an undeclared event": (
        "producers:\n  worker: [TaskCompleted, TaskFinished]\n",
        "unknown-event",
        (13, 27),
        "undeclared event 'TaskFinished'",
    ),
    "producer as a scalar": (
        "producers:\n  worker: TaskCompleted\n",
        "schema",
        (13, 11),
        "expected a list of event names for producer 'worker'",
    ),
    "producer lists an event twice": (
        "producers:\n  worker: [TaskCompleted, TaskCompleted]\n",
        "schema",
        (13, 11),
        "lists 'TaskCompleted' more than once",
    ),
    "producer name with a dot": (
        "producers:\n  a.b: [TaskCompleted]\n",
        "schema",
        (13, 3),
        "invalid producer name 'a.b'",
    ),
    "race of one event": (
        "races:\n  r: {events: [TaskCompleted], decision: x}\n",
        "schema",
        (13, 15),
        "'events' lists exactly 2 items, got 1",
    ),
    "race of three events": (
        "races:\n  r: {events: [TaskCompleted, TaskCancelled, TaskStarted], decision: x}\n",
        "schema",
        (13, 15),
        "'events' lists exactly 2 items, got 3",
    ),
    "race of an event with itself": (
        "races:\n  r: {events: [TaskCompleted, TaskCompleted], decision: x}\n",
        "schema",
        (13, 15),
        "'events' lists 'TaskCompleted' more than once",
    ),
    "race without a decision": (
        "races:\n  r: {events: [TaskCompleted, TaskCancelled]}\n",
        "schema",
        (13, 6),
        "missing required key 'decision' in race",
    ),
    "race with a misspelt key": (
        "races:\n  r: {events: [TaskCompleted, TaskCancelled], decision: x, inn: running}\n",
        "schema",
        (13, 60),
        "unknown key 'inn' in race",
    ),
    "race in: a list": (
        "races:\n  r: {events: [TaskCompleted, TaskCancelled], decision: x, in: [running]}\n",
        "schema",
        (13, 64),
        "expected a state reference for 'in'",
    ),
    "race as a list": (
        "races:\n  - {events: [TaskCompleted, TaskCancelled], decision: x}\n",
        "schema",
        (13, 3),
        "expected a map of races for 'races'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_declarations_are_one_positioned_error(case: str) -> None:
    extra, slug, (line, column), message = BAD[case]
    result = compile_text(BASE + extra)
    assert result.chart is None
    assert [(d.slug, d.span.line, d.span.column) for d in result.diagnostics] == [
        (slug, line, column)
    ], [(d.span, d.message) for d in result.diagnostics]
    assert message in result.diagnostics[0].message

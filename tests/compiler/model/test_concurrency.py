"""`producers:` and `races:`: compiled as written, checked against the schema and the events."""

from __future__ import annotations

import json

import pytest
from chart_helpers import chart_of, compile_text
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.compiler.schema.predicate import conforms
from statekit.compiler.serialize import chart_to_json
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import to_plain

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
    assert (first.span.line, first.sides[1].span.line) == (17, 18)
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


GROUPED = (
    BASE
    + """
producers:
  worker: {events: [TaskStarted, TaskCompleted], unordered: true, decision: Idempotent.}
  user: {events: [TaskCancelled]}
races:
  cancel_vs_work: {events: [TaskCancelled, [TaskStarted, TaskCompleted]], decision: x}
  cancel_vs_any: {events: ["*", TaskCancelled], in: running, decision: y}
  started_first: {precedes: [TaskStarted, "*"], decision: z}
"""
)


def test_grouped_forms_are_compiled_as_written() -> None:
    chart = chart_of(GROUPED)
    worker, user = chart.producers
    assert (worker.events, worker.unordered, worker.decision) == (
        ("TaskStarted", "TaskCompleted"),
        True,
        "Idempotent.",
    )
    assert (user.events, user.unordered, user.decision) == (("TaskCancelled",), False, None)
    by_set, by_any, fact = chart.races
    assert [(s.events, s.listed, s.any) for s in by_set.sides] == [
        (("TaskCancelled",), False, False),
        (("TaskStarted", "TaskCompleted"), True, False),
    ]
    assert by_set.events == ("TaskCancelled", "[TaskStarted, TaskCompleted]")
    assert (by_set.sides[1].span.column, by_set.sides[1].spans[1].column) == (44, 58)
    assert by_any.sides[0].any and by_any.state == chart.state("running").id
    assert (fact.precedes, fact.events, by_set.precedes) == (True, ("TaskStarted", "*"), False)
    assert by_set.specificity > by_any.specificity
    data = chart_to_json(chart)
    assert data["producers"] == {
        "worker": {
            "events": ["TaskStarted", "TaskCompleted"],
            "unordered": True,
            "decision": "Idempotent.",
        },
        "user": ["TaskCancelled"],
    }
    assert data["races"]["cancel_vs_work"]["events"] == [
        "TaskCancelled",
        ["TaskStarted", "TaskCompleted"],
    ]
    assert data["races"]["started_first"] == {"precedes": ["TaskStarted", "*"], "decision": "z"}
    assert chart.digest == chart_of(BASE).digest


def test_grouped_forms_are_checked_without_the_full_validator() -> None:
    """A valid chart is accepted by the schema's fast check (no list of lists under
    `uniqueItems`, which would send it on to jsonschema)."""
    root, problems = load_yaml(GROUPED, "chart.yaml")
    assert root is not None and not problems
    assert conforms(to_plain(root))


BAD = {
    "producer names an undeclared event": (
        "producers:\n  worker: [TaskCompleted, TaskFinished]\n",
        "unknown-event",
        (13, 27),
        "undeclared event 'TaskFinished'",
    ),
    "producer lists a timer event": (
        'producers:\n  clock: ["after(1h)@running"]\n',
        "unknown-event",
        (13, 11),
        "producer 'clock' lists the timer event 'after(1h)@running': timers are sent by the clock",
    ),
    "producer as a scalar": (
        "producers:\n  worker: TaskCompleted\n",
        "schema",
        (13, 11),
        "expected a list of event names or a producer mapping for producer 'worker'",
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
    "unordered producer without a decision": (
        "producers:\n  worker: {events: [TaskCompleted], unordered: true}\n",
        "schema",
        (13, 37),
        "producer 'worker' is `unordered: true` without a `decision:`",
    ),
    "decision on an ordered producer": (
        "producers:\n  worker: {events: [TaskCompleted], decision: x}\n",
        "schema",
        (13, 37),
        "has a `decision:` but is not `unordered: true`",
    ),
    "unordered producer names an undeclared event": (
        "producers:\n  worker: {events: [TaskCompleted, Nope], unordered: true, decision: x}\n",
        "unknown-event",
        (13, 36),
        "undeclared event 'Nope'",
    ),
    "producer mapping without events": (
        "producers:\n  worker: {unordered: true, decision: x}\n",
        "schema",
        (13, 11),
        "missing required key 'events' in producer",
    ),
    "producer with a misspelt key": (
        "producers:\n  worker: {events: [TaskCompleted], unorderd: true, decision: x}\n",
        "schema",
        (13, 37),
        "unknown key 'unorderd' in producer",
    ),
    "unordered as a string": (
        "producers:\n  worker: {events: [TaskCompleted], unordered: yes, decision: x}\n",
        "schema",
        (13, 48),
        "expected a boolean for 'unordered'",
    ),
    "unknown event in a set": (
        "races:\n  r: {events: [TaskCompleted, [TaskCancelled, Nope]], decision: x}\n",
        "unknown-event",
        (13, 47),
        "undeclared event 'Nope'",
    ),
    "unknown timer event in a set": (
        'races:\n  r: {events: [TaskCompleted, ["after(1h)@running"]], decision: x}\n',
        "unknown-event",
        (13, 32),
        "no timer event 'after(1h)@running' in this chart",
    ),
    "a wildcard on both sides": (
        'races:\n  r: {events: ["*", "*"], decision: x}\n',
        "schema",
        (13, 15),
        'has "*" on both sides of `events`',
    ),
    "an empty set": (
        "races:\n  r: {events: [TaskCompleted, []], decision: x}\n",
        "schema",
        (13, 31),
        "must not be empty",
    ),
    "a set listing an event twice": (
        "races:\n  r: {events: [TaskCompleted, [TaskCancelled, TaskCancelled]], decision: x}\n",
        "schema",
        (13, 31),
        "lists 'TaskCancelled' more than once",
    ),
    "a wildcard inside a set": (
        'races:\n  r: {events: [TaskCompleted, [TaskCancelled, "*"]], decision: x}\n',
        "schema",
        (13, 47),
        "invalid race event '*'",
    ),
    "a side that is a mapping": (
        "races:\n  r: {events: [TaskCompleted, {a: b}], decision: x}\n",
        "schema",
        (13, 31),
        "expected a race event or a list of race events for item 2 of 'events'",
    ),
    "precedes with an unknown event": (
        'races:\n  r: {precedes: [Nope, "*"], decision: x}\n',
        "unknown-event",
        (13, 18),
        "undeclared event 'Nope'",
    ),
    "precedes with an unknown event in a set": (
        "races:\n  r: {precedes: [TaskStarted, [TaskCompleted, Nope]], decision: x}\n",
        "unknown-event",
        (13, 47),
        "undeclared event 'Nope'",
    ),
    "precedes with a wildcard on both sides": (
        'races:\n  r: {precedes: ["*", "*"], decision: x}\n',
        "schema",
        (13, 17),
        'has "*" on both sides of `precedes`',
    ),
    "precedes of an event with itself": (
        "races:\n  r: {precedes: [TaskStarted, TaskStarted], decision: x}\n",
        "schema",
        (13, 17),
        "'precedes' lists 'TaskStarted' more than once",
    ),
    "precedes without a decision": (
        'races:\n  r: {precedes: [TaskStarted, "*"]}\n',
        "schema",
        (13, 6),
        "missing required key 'decision' in ordering fact",
    ),
    "precedes with in": (
        'races:\n  r: {precedes: [TaskStarted, "*"], decision: x, in: running}\n',
        "schema",
        (13, 50),
        "unknown key 'in' in ordering fact",
    ),
    "precedes and events together": (
        'races:\n  r: {precedes: [TaskStarted, "*"], events: [TaskStarted, "*"], decision: x}\n',
        "schema",
        (13, 6),
        "needs 'events' and 'decision' (a race) or 'precedes' and 'decision'",
    ),
    "race of three sides": (
        'races:\n  r: {events: [TaskStarted, "*", TaskCompleted], decision: x}\n',
        "schema",
        (13, 15),
        "'events' lists exactly 2 items, got 3",
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


_names = st.sampled_from(
    ["TaskCompleted", "TaskCancelled", "Nope", "running", "a.b", "", "*", "after(1h)@running"]
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), _names)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["events", "in", "decision", "x", "worker", "precedes", "unordered"]),
            inner,
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(producers=_values, races=_values)
def test_any_value_under_producers_and_races_is_a_chart_or_positioned_errors(
    producers: object, races: object
) -> None:
    """Whatever a user writes there: a chart, or errors that each have a position."""
    text = BASE + f"producers: {json.dumps(producers)}\nraces: {json.dumps(races)}\n"
    result = compile_text(text)
    if result.chart is None:
        assert result.diagnostics
    for d in result.diagnostics:
        assert d.span.line >= 1 and d.span.column >= 1, d
        assert "internal" not in d.message.lower() and "Traceback" not in d.message

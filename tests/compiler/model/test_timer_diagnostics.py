"""Every mistake in `after`, `send` and `cancel` is one positioned diagnostic (file:line:column)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.compiler.model.timers import DELAY_FORMS, parse_delay
from statekit.compiler.pipeline import compile_source
from statekit.compiler.schema.document import schema

HEAD = """statechart: t
context:
  n: {type: integer, default: 0}
  s: {type: string, default: ""}
  f: {type: number, default: 0}
  maybe: {type: integer, nullable: true, default: null}
events:
  Go: {}
  Remind: {count: integer, note: {type: string, default: ""}}
guards:
  reads_event: event.count > 0
initial: a
states:
  a:
"""
LINE = HEAD.count("\n") + 1  # the line of the case's text
NO_EVENT = "is not available here: an `after` timer fires without an event payload"

# (the state's key line, slug, column, a part of the message)
CASES = {
    "send of an undeclared event": (
        "entry: [{send: {event: Nope}}]",
        "unknown-event", 28, "send of undeclared event 'Nope'",
    ),
    "send payload field unknown": (
        "entry: [{send: {event: Remind, payload: {count: 1, colour: 2}}}]",
        "expression-type", 56, "event Remind has no payload field 'colour'",
    ),
    "send payload field missing": (
        "entry: [{send: {event: Remind, payload: {note: \"'x'\"}}}]",
        "expression-type", 45, "send of Remind is missing payload field(s): count",
    ),
    "send without its required payload": (
        "entry: [{send: {event: Remind}}]",
        "expression-type", 13, "send of Remind is missing payload field(s): count",
    ),
    "send payload of the wrong type": (
        "entry: [{send: {event: Remind, payload: {count: \"'many'\"}}}]",
        "expression-type", 54, "payload field 'count': expected integer, got string",
    ),
    "send with delay and at": (
        "entry: [{send: {event: Go, delay: 5s, at: ctx.n}}]",
        "schema", 43, "has both 'delay' and 'at'",
    ),
    "send delay of type string": (
        "entry: [{send: {event: Go, delay: ctx.s}}]",
        "expression-type", 39, "send 'delay': expected integer, got string",
    ),
    "send delay of type number": (
        "entry: [{send: {event: Go, delay: ctx.f}}]",
        "expression-type", 39, "send 'delay': expected integer, got number",
    ),
    "send at of type boolean": (
        "entry: [{send: {event: Go, at: ctx.n > 1}}]",
        "expression-type", 36, "send 'at': expected integer, got boolean",
    ),
    "send delay literal malformed": (
        "entry: [{send: {event: Go, delay: 5min}}]",
        "schema", 39, f"invalid delay literal '5min': the accepted forms are {DELAY_FORMS}",
    ),
    "send delay reading event in entry": (
        "entry: [{send: {event: Go, delay: event.count}}]",
        "expression-type", 39, "event.count is not available here",
    ),
    "send id not an identifier": (
        "entry: [{send: {event: Go, delay: 1s, id: 9x}}]",
        "schema", 47, "invalid timer id '9x'",
    ),
    "cancel of an id no send uses": (
        "entry: [{cancel: nothing}]",
        "unknown-timer-id", 22, "cancel of 'nothing': no send in the chart has this id",
    ),
    "after literal with a fraction": (
        "after: {1.5h: a}",
        "schema", 13, f"invalid delay literal '1.5h': the accepted forms are {DELAY_FORMS}",
    ),
    "after literal units out of order": (
        "after: {30m1h: a}",
        "schema", 13, f"invalid delay literal '30m1h': the accepted forms are {DELAY_FORMS}",
    ),
    "after literal past 2^63 - 1 ms": (
        "after: {9999999999999999999ms: a}",
        "schema", 13, f"is longer than 2^63 - 1 ms: the accepted forms are {DELAY_FORMS}",
    ),
    "after delay literal with a space": (
        "after: [{delay: 1h 30m, to: a}]",
        "schema", 21, f"invalid delay literal '1h 30m': the accepted forms are {DELAY_FORMS}",
    ),
    "after delay of type string": (
        "after: [{delay: ctx.s, to: a}]",
        "expression-type", 21, "timer 'delay': expected integer, got string",
    ),
    "after delay that may be null": (
        "after: [{delay: ctx.maybe, to: a}]",
        "expression-type", 21, "timer 'delay': expected integer, got integer or null",
    ),
    "after at of type number": (
        "after: [{at: ctx.f, to: a}]",
        "expression-type", 18, "timer 'at': expected integer, got number",
    ),
    "after delay reading event": (
        "after: [{delay: event.count, to: a}]",
        "expression-type", 21, f"timer 'delay': event.count {NO_EVENT}",
    ),
    "after at reading event": (
        "after: [{at: event.count + 1, to: a}]",
        "expression-type", 18, f"timer 'at': event.count {NO_EVENT}",
    ),
    "after if reading event": (
        "after: [{delay: 5s, if: event.count > 1, to: a}]",
        "expression-type", 29, f"'if': event.count {NO_EVENT}",
    ),
    "after effect reading event": (
        "after: {5s: {to: a, do: [{assign: {n: event.count}}]}}",
        "expression-type", 43, f"assign to ctx.n: event.count {NO_EVENT}",
    ),
    "after delay and at": (
        "after: [{delay: 5s, at: ctx.n, to: a}]",
        "schema", 25, "item 1 of 'after' has both 'delay' and 'at'",
    ),
    "after entry with neither delay nor at": (
        "after: [{to: a}]",
        "schema", 13, "a timer mapping needs 'delay' (a relative timer) or 'at'",
    ),
    "after delay not a string": (
        "after: [{delay: 5, to: a}]",
        "schema", 21, "expected a delay for 'delay', got an integer",
    ),
    "after misspelt delay": (
        "after: [{delai: 5s, to: a}]",
        "schema", 14, "unknown key 'delai' in timer",
    ),
    "after of a string": (
        "after: 5s",
        "schema", 12, "expected a map of timers or a list of timers for 'after', got a string",
    ),
    "after unknown target": ("after: {5s: b}", "unknown-state", 17, "unknown state 'b'"),
    "after unknown guard": (
        "after: {5s: {to: a, guard: nope}}", "unknown-guard", 32, "unknown guard 'nope'",
    ),
    "after delay syntax error": (
        "after: [{delay: ctx.n +, to: a}]", "expression-syntax", 28, "timer 'delay'",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("body", "slug", "column", "message"), CASES.values(), ids=list(CASES))
def test_each_mistake_is_one_positioned_diagnostic(
    body: str, slug: str, column: int, message: str
) -> None:
    result = compile_source(f"{HEAD}    {body}\n", "timers.yaml")
    assert result.chart is None
    assert len(result.diagnostics) == 1, [str(d) for d in result.diagnostics]
    (found,) = result.diagnostics
    assert (found.slug, found.span.file, found.span.line, found.span.column) == (
        slug,
        "timers.yaml",
        LINE,
        column,
    ), found
    assert message in found.message


def test_a_guard_reading_event_used_by_a_timer_is_reported_at_the_guard() -> None:
    result = compile_source(f"{HEAD}    after: {{5s: {{to: a, guard: reads_event}}}}\n", "t.yaml")
    (found,) = result.diagnostics
    assert (found.slug, found.span.line, found.span.column) == ("expression-type", 11, 16)
    assert NO_EVENT in found.message and "used by a timer" in found.notes


def test_the_schema_names_the_same_forms() -> None:
    definition = schema()["definitions"]["delayLiteral"]
    assert DELAY_FORMS in definition["$comment"]


texts = st.text(alphabet="0123456789dhms.", min_size=1, max_size=10)


@settings(max_examples=300)
@given(texts)
def test_every_key_is_a_timer_or_one_schema_diagnostic_naming_the_forms(key: str) -> None:
    """The schema's pattern and the compiler's parser agree on every generated key."""
    source = f"{HEAD}    on: {{Go: a}}\n    after: {{'{key}': a}}\n"
    result = compile_source(source, "t.yaml")
    literal = parse_delay(key)
    if literal is not None:
        assert result.chart is not None, [str(d) for d in result.diagnostics]
        (timer,) = result.chart.timers
        assert timer.name == f"after({literal.normalised})@a" and timer.delay_ms == literal.ms
    else:
        assert result.chart is None
        (found,) = result.diagnostics
        assert found.slug == "schema" and (found.span.line, found.span.column) == (LINE + 1, 13)
        assert DELAY_FORMS in found.message


def test_a_declared_event_with_a_timer_events_name_is_refused_at_the_timer() -> None:
    source = (
        "statechart: t\nevents: {'after(5s)@a': {}}\ninitial: a\nstates:\n"
        "  a:\n    on: {'after(5s)@a': a}\n    after: {5s: a}\n"
    )
    result = compile_source(source, "t.yaml")
    (found,) = result.diagnostics
    assert (found.slug, found.span.line, found.span.column) == ("schema", 7, 13)
    assert "the event 'after(5s)@a' is declared, but the name belongs to this timer" in (
        found.message
    )

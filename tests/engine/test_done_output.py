"""A nested final state's `output:` is the payload of `done.state.<parent>` (SCXML's
`<donedata>`): the parent's `done:` transitions read it as `event.<field>`, typed from
the output's expressions; an output that fails raises `error.execution` first and the
done event carries nothing (with `on_evaluation_error: raise`), else the event is
rejected as any failing expression is."""

from __future__ import annotations

import pytest
from chart_helpers import compile_text, machine

from statekit.engine.result import EVALUATION_ERROR, Status
from statekit.testing import Simulator

CHART = """
statechart: review
{errors}
context:
  score: {{type: integer, default: 0}}
  parts: {{type: integer, default: 1}}
  verdict: {{type: string, default: ""}}
  got: {{type: integer, default: -1}}
events:
  SCORE: {{value: integer}}
  PARTS: {{value: integer}}
  FINISH: {{}}
  GIVE_UP: {{}}
initial: reviewing
states:
  reviewing:
    initial: scoring
    states:
      scoring:
        on:
          SCORE: {{do: [{{assign: {{score: event.value}}}}]}}
          PARTS: {{do: [{{assign: {{parts: event.value}}}}]}}
          FINISH: {{to: scored}}
          GIVE_UP: {{to: abandoned}}
      scored:
        final: true
        output: {{total: ctx.score // ctx.parts, note: "'scored'"}}
      abandoned:
        final: true
        output: {{total: 0, note: "'abandoned'"}}
    done:
      - {{to: accepted, if: "event.total >= 10", do: [{{assign: {{verdict: event.note}}}}]}}
      - {{to: rejected, do: [{{assign: {{verdict: event.note, got: event.total}}}}]}}
    on:
      error.execution: {{to: broken, do: [{{assign: {{verdict: event.reason}}}}]}}
  accepted: {{final: true}}
  rejected: {{final: true}}
  broken: {{final: true}}
"""

RAISING = CHART.format(errors="on_evaluation_error: raise")


@pytest.mark.parametrize(
    ("events", "state", "verdict", "got"),
    [
        ([("SCORE", {"value": 12}), ("FINISH", None)], "accepted", "scored", -1),
        ([("SCORE", {"value": 4}), ("FINISH", None)], "rejected", "scored", 4),
        (
            [("SCORE", {"value": 12}), ("PARTS", {"value": 2}), ("FINISH", None)],
            "rejected",
            "scored",
            6,
        ),
        ([("SCORE", {"value": 12}), ("GIVE_UP", None)], "rejected", "abandoned", 0),
    ],
    ids=["enough", "too-little", "divided", "other-final-child"],
)
def test_the_done_transition_reads_the_final_states_output(
    events: list[tuple[str, dict[str, int] | None]], state: str, verdict: str, got: int
) -> None:
    simulator = Simulator(machine(RAISING))
    for name, payload in events:
        simulator.send(name, payload)
    assert simulator.state.configuration == frozenset({state})
    assert simulator.state.context["verdict"] == verdict
    assert simulator.state.context["got"] == got


def test_a_failing_output_raises_error_execution_before_the_empty_done_event() -> None:
    simulator = Simulator(machine(RAISING))
    simulator.send("PARTS", {"value": 0})
    result = simulator.send("FINISH")
    assert result.status is Status.APPLIED
    # error.execution is queued first and leaves `reviewing`: the done event then finds
    # no transition (SCXML: the error precedes the done event, whose data is empty)
    assert simulator.state.configuration == frozenset({"broken"})
    assert "output field 'total'" in simulator.state.context["verdict"]


def test_without_the_key_a_failing_output_rejects_the_event() -> None:
    text = CHART.format(errors="").replace("error.execution", "GIVE_UP")
    text = text.replace("verdict: event.reason", "verdict: \"'gave up'\"")
    simulator = Simulator(machine(text))
    simulator.send("PARTS", {"value": 0})
    result = simulator.send("FINISH")
    assert (result.status, result.reason) == (Status.REJECTED, EVALUATION_ERROR)
    assert simulator.state.configuration == frozenset({"reviewing", "reviewing.scoring"})


@pytest.mark.parametrize(
    ("change", "slug", "words"),
    [
        (
            ("note: \"'abandoned'\"", "note: 3"),
            "schema",
            "gives the output {total: integer, note: integer}",
        ),
        (
            ("total: 0, note: \"'abandoned'\"", "note: \"'abandoned'\""),
            "schema",
            "gives the output {note: string}",
        ),
        (("event.total >= 10", "event.sum >= 10"), "expression-type", "sum"),
        (
            ("output: {total: 0, note: \"'abandoned'\"}", "output: {total: 0, note: event.x}"),
            "expression-type",
            "without an event",
        ),
    ],
    ids=["another-type", "fewer-fields", "unknown-field", "output-reads-an-event"],
)
def test_each_misuse_is_a_positioned_error(change: tuple[str, str], slug: str, words: str) -> None:
    text = RAISING.replace(*change)
    assert text != RAISING
    result = compile_text(text)
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    assert errors, result.diagnostics
    assert any(d.slug == slug and words in d.message for d in errors), errors
    assert all(d.span.line > 0 for d in errors)


def test_a_done_transition_without_outputs_still_has_no_event() -> None:
    text = RAISING.replace(
        "        output: {total: ctx.score // ctx.parts, note: \"'scored'\"}\n", ""
    )
    text = text.replace("        output: {total: 0, note: \"'abandoned'\"}\n", "")
    result = compile_text(text)
    messages = [d.message for d in result.diagnostics]
    assert any("done transitions have no typed event" in m for m in messages), messages

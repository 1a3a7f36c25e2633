"""`_event.origin` and `_event.invokeid` of the events the family step delivers: an
event from another member says which instance sent it and, from a child, which
invocation; an instance's own `send` comes from the instance itself; an event from
outside or an `after` timer says nothing."""

from __future__ import annotations

from pathlib import Path

from family_charts import load_text

from statekit.engine.result import Status
from statekit.testing import FamilySimulator

SOURCE = "{type: string, nullable: true}"

PARENT = f"""\
statechart: asker
context:
  ask_origin: {SOURCE}
  note_origin: {SOURCE}
  answer_origin: {SOURCE}
  answer_invokeid: {SOURCE}
  done_origin: {SOURCE}
  done_invokeid: {SOURCE}
events:
  ask: {{}}
  answer: {{}}
  note: {{}}
initial: asking
states:
  asking:
    invoke: {{id: helper, chart: helper}}
    on:
      ask:
        do:
          - assign: {{ask_origin: _event.origin}}
          - send: {{to: helper, event: question}}
          - send: {{event: note}}
      note: {{do: [{{assign: {{note_origin: _event.origin}}}}]}}
      answer:
        do: [{{assign: {{answer_origin: _event.origin, answer_invokeid: _event.invokeid}}}}]
      done.invoke.helper:
        to: finished
        do: [{{assign: {{done_origin: _event.origin, done_invokeid: _event.invokeid}}}}]
  finished:
    final: true
"""

CHILD = f"""\
statechart: helper
context:
  asked_by: {SOURCE}
  asked_via: {{type: string, nullable: true, default: unset}}
events:
  question: {{}}
  stop: {{}}
initial: waiting
states:
  waiting:
    on:
      question:
        do:
          - assign: {{asked_by: _event.origin, asked_via: _event.invokeid}}
          - send: {{to: parent, event: answer}}
      stop: done
  done:
    final: true
"""


def started(tmp_path: Path) -> FamilySimulator:
    sim = FamilySimulator([load_text(tmp_path, PARENT), load_text(tmp_path, CHILD)])
    sim.start("asker", "a")
    return sim


def test_a_childs_event_names_the_child_and_its_invocation(tmp_path: Path) -> None:
    sim = started(tmp_path)
    step = sim.send("ask", to="a")
    assert all(r.result is not None and r.result.status is Status.APPLIED for r in step.records)
    context = sim.member("a").state.context
    # from outside: no origin; its own send: itself; the child's answer: the child, "helper"
    assert (context["ask_origin"], context["note_origin"]) == (None, "a")
    assert (context["answer_origin"], context["answer_invokeid"]) == ("a/helper/0", "helper")


def test_a_parents_event_names_the_parent_and_no_invocation(tmp_path: Path) -> None:
    sim = started(tmp_path)
    sim.send("ask", to="a")
    child = sim.member("a/helper/0").state.context
    assert (child["asked_by"], child["asked_via"]) == ("a", None)


def test_done_invoke_names_the_finished_child(tmp_path: Path) -> None:
    sim = started(tmp_path)
    sim.send("stop", to="a/helper/0")
    parent = sim.member("a")
    assert parent.state.configuration == frozenset({"finished"})
    context = parent.state.context
    assert (context["done_origin"], context["done_invokeid"]) == ("a/helper/0", "helper")

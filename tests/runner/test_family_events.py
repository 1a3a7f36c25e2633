"""The events only a family makes (`done.invoke.<id>`, `error.invoke.<id>`, a `reply:`
event) are refused from outside, REJECTED `FAMILY_EVENT`, by both drivers alike: every
kind, sent by a caller and as a message from another instance, through the Simulator and
the runner on both stores; the real ones still arrive."""

from __future__ import annotations

from typing import Any

import pytest
from runner_charts import chart_from

from statekit.engine.chart import Chart
from statekit.engine.family_events import FAMILY_EVENT
from statekit.runner.message_delivery import new_message
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import FamilySimulator

SUB = """
statechart: sub
version: 1
description: Bills on renewal, and asks an auditor who answers.
context:
  ref: {type: string, default: ""}
  answers: {type: integer, default: 0}
events:
  audit: {}
  answered: {status: string, reason: {type: string, nullable: true}}
initial: renewing
states:
  renewing:
    invoke: {id: bill, chart: bill, output: {ref: string}}
    on:
      done.invoke.bill: {to: active, do: [{assign: {ref: event.ref}}]}
      error.invoke.bill: lapsed
      audit:
        do: [{send: {to: {chart: auditor, instance: "'a1'"}, event: check, reply: answered}}]
      answered: {do: [{assign: {answers: ctx.answers + 1}}]}
  active: {}
  lapsed: {}
"""

BILL = """
statechart: bill
version: 1
description: A bill that is paid.
events:
  pay: {}
initial: open
states:
  open:
    on:
      pay: paid
  paid:
    final: true
    output: {ref: '"R"'}
"""

AUDITOR = """
statechart: auditor
version: 1
description: Counts the checks it is asked for.
context:
  checks: {type: integer, default: 0}
events:
  check: {}
initial: open
states:
  open:
    on:
      check: {do: [{assign: {checks: ctx.checks + 1}}]}
"""

FORGER = """
statechart: forger
version: 1
description: Sends an instance of sub the reply only its family may send it.
events:
  forge_reply: {}
initial: ready
states:
  ready:
    on:
      forge_reply:
        do: [{send: {to: {chart: sub, instance: "'s1'"}, event: answered,
                     payload: {status: "'APPLIED'", reason: "'forged'"}}}]
"""

KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "done": ("done.invoke.bill", {"ref": "FORGED"}),
    "error": ("error.invoke.bill", {"reason": "forged"}),
    "reply": ("answered", {"status": "APPLIED", "reason": "forged"}),
}
SOURCES = ("caller", "message")


def _charts() -> list[Chart]:
    return [chart_from(text) for text in (SUB, BILL, AUDITOR, FORGER)]


def _unchanged(context: dict[str, Any] | Any, configuration: set[str] | Any) -> None:
    assert configuration == {"renewing"}
    assert (context["ref"], context["answers"]) == ("", 0)


# (a chart cannot name `done.invoke.<id>` or `error.invoke.<id>` in a `send`: the compiler
# refuses the event name, so the Simulator's messages can forge only a reply)
SIMULATED = [(k, s) for k in sorted(KINDS) for s in SOURCES if s == "caller" or k == "reply"]


@pytest.mark.parametrize(("kind", "source"), SIMULATED)
def test_the_simulator_refuses_family_events_from_outside(kind: str, source: str) -> None:
    sim = FamilySimulator(_charts())
    sim.start("sub", "s1")
    sim.start("forger", "f1")
    event, payload = KINDS[kind]
    if source == "caller":
        step = sim.send(event, payload, to="s1")
    else:
        assert sim.send(f"forge_{kind}", to="f1").result.applied  # type: ignore[union-attr]
        (step,) = sim.deliver_outbound()
    assert step.reason == FAMILY_EVENT
    assert "only from the family" in (step.records[0].message or "")
    s1 = sim.member("s1")
    _unchanged(s1.state.context, s1.state.configuration)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_runner_refuses_family_events_from_outside(
    store_url: str, kind: str, source: str
) -> None:
    sub, bill, auditor, _forger = _charts()
    store = open_store(store_url)
    runner = Runner(sub, store, charts=[bill, auditor])
    runner.create("s1")
    event, payload = KINDS[kind]
    if source == "caller":
        outcome = runner.apply("s1", "e1", event, payload)
        assert (outcome.status.value, outcome.reason) == ("REJECTED", FAMILY_EVENT)
        assert outcome.message is not None and "only from the family" in outcome.message
    else:
        # a message from another instance, as its sender's transaction writes it
        with store.write():
            store.insert_instance_messages(
                [new_message("sub", "s1", "f1", 1, 0, event, payload, None, 0.0)]
            )
        (delivered,) = runner.deliver_messages()
        assert (delivered.status, delivered.reason) == ("REJECTED", FAMILY_EVENT)
    s1 = runner.load("s1").state
    _unchanged(s1.context, s1.configuration)
    assert [r.reason for r in store.rejections("s1")] == [FAMILY_EVENT]  # the audit
    assert runner.verify("s1").ok


def test_the_real_family_events_still_arrive_in_both_drivers(store_url: str) -> None:
    sub, bill, auditor, _forger = _charts()
    sim = FamilySimulator([sub, bill, auditor])
    sim.start("sub", "s1")
    sim.start("auditor", "a1")
    sim.send("audit", to="s1")
    sim.deliver_outbound()  # the check, then its reply
    sim.send("pay", to="s1/bill/0")
    store = open_store(store_url)
    runner = Runner(sub, store, charts=[bill, auditor])
    Runner(auditor, store).create("a1")
    runner.create("s1")
    runner.apply("s1", "e1", "audit")
    while runner.deliver_messages():
        pass
    runner.apply("s1/bill/0", "p1", "pay")
    for state in (sim.member("s1").state, runner.load("s1").state):
        assert state.configuration == {"active"}
        assert (state.context["ref"], state.context["answers"]) == ("R", 1)
    assert runner.verify("s1").ok and runner.verify("s1/bill/0").ok

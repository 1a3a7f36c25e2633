"""`invoke: {finalize: [...]}`: the parent's assigns run on every event from that child
(its sends to `parent`, `done.invoke.<id>`, `error.invoke.<id>`) before the parent's
transitions select it; events from another child, from outside or from the parent
itself run no finalize; a rejected event keeps nothing of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from family_charts import load_text
from finalize_charts import PARENT, PROBE

from statekit.compiler.diagnostics import CompileError
from statekit.engine.result import Status
from statekit.testing import FamilySimulator


def started(tmp_path: Path) -> FamilySimulator:
    sim = FamilySimulator([load_text(tmp_path, PARENT), load_text(tmp_path, PROBE)], now_ms=0)
    sim.start("collector", "c")
    return sim


Sent = list[tuple[str, dict[str, Any], str]]
CASES: dict[str, tuple[Sent, set[str], dict[str, Any]]] = {
    # what happens → (leaves of the parent, its context afterwards)
    "a child's event is finalized before the guards read it": (
        [("measure", {"value": 42}, "c/probe/0")],
        {"collecting.left.high", "collecting.right.idle"},
        {"last": 42, "ref": None, "finalized": 1},
    ),
    "a finalize's assign decides the guard the other way": (
        [("measure", {"value": 3}, "c/probe/0")],
        {"collecting.left.waiting", "collecting.right.idle"},
        {"last": 3, "ref": None, "finalized": 1},
    ),
    "done.invoke is finalized (its output read, a missing field read as null)": (
        [("quit", {}, "c/probe/0")],
        {"collecting.left.finished", "collecting.right.idle"},
        {"last": None, "ref": "R-1", "finalized": 1},
    ),
    "an event from another child is not finalized": (
        [("poke", {}, "c")],
        {"collecting.left.waiting", "collecting.right.idle"},
        {"last": 0, "ref": "none-yet", "finalized": 0},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_finalize(case: str, tmp_path: Path) -> None:
    events, leaves, context = CASES[case]
    sim = started(tmp_path)
    for event, payload, to in events:
        sim.send(event, payload, to=to)
    state = sim.member("c").state
    assert set(state.leaves) == leaves
    assert {k: state.context[k] for k in context} == context


def test_the_same_event_from_outside_is_not_finalized(tmp_path: Path) -> None:
    sim = started(tmp_path)
    sim.send("reading", {"value": 42}, to="c")
    state = sim.member("c").state
    assert set(state.leaves) == set(
        {"collecting.left.waiting", "collecting.right.idle"}
    )  # ctx.last still 0: not 42
    assert state.context["finalized"] == 0


def test_the_evidence_shows_the_finalize_first(tmp_path: Path) -> None:
    sim = started(tmp_path)
    step = sim.send("measure", {"value": 42}, to="c/probe/0")
    [record] = [r for r in step.records if r.delivery.target == "c"]
    assert record.result is not None and record.result.status is Status.APPLIED
    finalize, transition = record.result.evidence
    assert (finalize.event, finalize.transitions, finalize.payload) == (
        "reading",
        (),
        {"value": 42},
    )
    assert [(c.field, c.new) for c in finalize.changes] == [
        ("last", 42),
        ("ref", None),
        ("finalized", 1),
    ]
    assert [t.targets for t in transition.transitions] == [("collecting.left.high",)]


REJECTING = PARENT.replace(
    "                - {description: a low reading stays}\n", ""
)  # a low reading selects nothing: REJECTED


def test_a_rejected_event_keeps_nothing_of_its_finalize(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, REJECTING), load_text(tmp_path, PROBE)], now_ms=0)
    sim.start("collector", "c")
    step = sim.send("measure", {"value": 3}, to="c/probe/0")
    [record] = [r for r in step.records if r.delivery.target == "c"]
    assert record.result is not None and record.result.status is Status.REJECTED
    assert sim.member("c").state.context["finalized"] == 0


@pytest.mark.parametrize(
    ("finalize", "message"),
    [
        ("{emit: {type: seen}}", "the finalize of invoke 'probe' may only assign the context"),
        ("{assign: {finalized: event.value}}", "expected integer, got integer or null"),
        ("{assign: {last: event.nope}}", "nope"),
    ],
)
def test_a_finalize_that_cannot_be_is_a_positioned_error(
    finalize: str, message: str, tmp_path: Path
) -> None:
    line = "- assign: {last: event.value, ref: event.ref, finalized: ctx.finalized + 1}"
    text = PARENT.replace(line, f"- {finalize}")
    with pytest.raises(CompileError) as raised:
        load_text(tmp_path, text)
    [problem] = [d for d in raised.value.diagnostics if message in d.message]
    assert problem.span.line == 23  # the effect, in the finalize list


def test_a_secret_a_finalize_copies_stays_secret(tmp_path: Path) -> None:
    secret = PARENT.replace(
        "reading: {value: integer}", "reading: {value: {type: integer, secret: true}}"
    )
    chart = load_text(tmp_path, secret)
    assert "last" in chart.ir.redacted.context  # copied from the secret event.value
    assert "ref" not in chart.ir.redacted.context

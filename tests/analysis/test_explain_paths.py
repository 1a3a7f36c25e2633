"""`explain` (the classification table) and `paths` (covering event sequences)."""

from __future__ import annotations

import re

import pytest
from analysis_charts import MACHINES, explored

import statekit
from statekit.analysis.explain import explain
from statekit.analysis.explorer import explore
from statekit.analysis.facts import selected_transitions
from statekit.analysis.paths import covering_paths, rejection_class


def _readme_table() -> dict[tuple[str, str], str]:
    """The intended outcome of every payment pair, from machines/README.md."""
    text = (MACHINES / "README.md").read_text(encoding="utf-8")
    header = re.search(r"^\| state \\ event \| (.+) \|$", text, re.M)
    assert header is not None
    events = [e.strip() for e in header[1].split("|")]
    table: dict[tuple[str, str], str] = {}
    for state, cells in re.findall(r"^\| ([a-z_]+) \| (.+) \|$", text, re.M):
        for event, cell in zip(events, cells.split("|"), strict=True):
            table[(state, event)] = cell.strip()
    return table


def test_the_payment_table_is_the_one_the_machines_readme_documents() -> None:
    intended = _readme_table()
    assert len(intended) == 49
    explanation = explain(explore(statekit.compile(MACHINES / "payment.yaml")))
    timer = "after(15m)@processing"  # the README's prose tells the timeout, not its table
    timed = {
        row.states: [v.text() for v in row.verdicts[timer]]
        for row in explanation.rows
        if timer in row.verdicts
    }
    assert timed == {("processing",): ["→ closed"]}
    for row in explanation.rows:
        (state,) = row.states
        for event, verdicts in row.verdicts.items():
            if event == timer:
                continue
            texts = {v.text().replace("→ ", "APPLIED → ") for v in verdicts}
            assert intended[(state, event)] in texts, (state, event, texts)
            guarded = {v for v in verdicts if v.assuming}
            assert len(verdicts) == 1 or guarded == set(verdicts)


def test_invariant_statuses_of_the_task_chart() -> None:
    explanation = explain(explore(statekit.compile(MACHINES / "task.yaml")))
    statuses = {i.name: i.status for i in explanation.invariants}
    assert statuses == {
        "completed_requires_verified_artifact": "proven",
        "cancelled_requires_reconciled": "proven",
        "requested_only_while_cancelling": "proven",
        "queued_starts_clean": "proven",
        "attempts_within_budget": "runtime",
        "running_holds_lease": "runtime",
        "recovering_holds_no_lease": "runtime",
        "waiting_retry_starts_clean": "proven",
    }
    assert explanation.counts["configurations"] == 17
    assert explanation.counts["transitions_selectable"] == explanation.counts["transitions"]


def test_explain_filters_by_state_and_event() -> None:
    result = explore(statekit.compile(MACHINES / "task.yaml"))
    running = result.chart.path_index["lifecycle.running"]
    explanation = explain(result, state=running, event="TaskStarted")
    assert explanation.rows
    for row in explanation.rows:
        assert "lifecycle.running" in row.states
        assert list(row.verdicts) == ["TaskStarted"]
        assert [v.text() for v in row.verdicts["TaskStarted"]] == ["REJECTED TASK_ALREADY_RUNNING"]
    data = explanation.to_json()
    assert data["counts"]["configurations"] == 17
    assert data["invariants"][0]["status"] == "proven"


@pytest.mark.parametrize("name", ["task", "payment", "media_player"])
def test_paths_fire_every_transition_and_reach_every_rejection_class(name: str) -> None:
    result = explore(statekit.compile(MACHINES / f"{name}.yaml"))
    suite = covering_paths(result)
    assert set(suite.transitions) == set(selected_transitions(result))
    assert len(suite.transitions) == len(result.chart.transitions)
    reached = {c for path in suite.paths for c in path.rejections}
    assert reached == set(suite.rejections)
    fired = {t for path in suite.paths for step in path.steps for t in step.transitions}
    assert fired == set(suite.transitions)
    for path in suite.paths:
        assert path.steps[0].event is None  # each path starts at the initial configuration
        assert all(step.event is not None for step in path.steps[1:])


def test_paths_include_eventless_transitions_and_follow_the_graph() -> None:
    result = explored("""
        statechart: eventless
        context: {ok: boolean}
        events: {GO: {}, BACK: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {BACK: AT_START}}
          b:
            always: {to: c, if: ctx.ok}
            on: {BACK: a}
            reject: {GO: WAITING}
          c: {final: true, reject: {"*": DONE}}
        """)
    suite = covering_paths(result)
    kinds = {result.chart.transitions[t].kind.value for t in suite.transitions}
    assert kinds == {"event", "always"}
    classes = {(c[0], c[2]) for c in suite.rejections}
    assert classes == {("BACK", "AT_START"), ("GO", "WAITING"), ("GO", "DONE"), ("BACK", "DONE")}
    for node in result.nodes:
        for outcome in node.outcomes or ():
            if not outcome.fired:
                assert rejection_class(result, node.id, outcome)[0] == outcome.event

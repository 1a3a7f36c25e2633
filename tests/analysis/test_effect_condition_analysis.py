"""The analysis reads an `if` effect's condition as it reads a guard: decided when the
data it reads is tracked, else both outcomes are explored (never a false "unreachable");
a condition on what the event is (`_event.type`, `_event.name`) is decided exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_charts import chart_of, explored, findings

from statekit.analysis.facts import reached_states

# `high` is entered only through the `then` branch's raise, `low` only through `else`,
# `middle` only through the elif, each in a different place: a transition's effects,
# an entry action, an exit action.
BRANCHES = """
statechart: branches
context:
  n: {type: integer, default: 0}
  flag: {type: boolean, default: false}
events: {GO: {amount: integer}, HIGH: {}, LOW: {}, MID: {}, BACK: {}}
initial: idle
states:
  idle:
    on:
      GO:
        to: busy
        do:
          - assign: {n: event.amount}
          - if:
              cond: ctx.n > 100
              then: [{raise: HIGH}]
              elif: [{cond: ctx.n > 10, then: [{raise: MID}]}]
              else: [{raise: LOW}]
  busy:
    on: {HIGH: high, LOW: low, MID: middle}
    reject: {"*": BUSY}
  high:
    entry: [{if: {cond: ctx.flag, then: [{raise: BACK}]}}]
    on: {BACK: idle}
    reject: {"*": DONE}
  middle: {final: true}
  low:
    exit: [{if: {cond: ctx.n == 0, then: [{assign: {flag: true}}]}}]
    on: {GO: idle}
    reject: {"*": DONE}
"""


def test_every_branch_of_an_if_is_explored() -> None:
    chart = chart_of(BRANCHES)
    reached = reached_states(explored(BRANCHES))
    names = {chart.states[s].path for s in reached}
    assert {"idle", "busy", "high", "low", "middle"} <= names


def test_lint_reports_no_unreachable_state_behind_an_if(tmp_path: Path) -> None:
    for slug in ("unreachable-state", "unreachable-transition"):
        assert findings(tmp_path, BRANCHES, slug) == []


@pytest.mark.parametrize("holds", ["holds", "fails"])
def test_the_explorer_names_the_effect_condition_it_assumed(holds: str) -> None:
    exploration = explored(BRANCHES)
    chart = chart_of(BRANCHES)
    words = [
        a.describe(chart)
        for node in exploration.nodes
        for branch in node.outcomes or ()
        for a in branch.assumptions
    ]
    assert f"effect condition (ctx.n > 100) {holds}" in words


def test_a_condition_on_tracked_data_is_decided_not_assumed() -> None:
    # `flag` is a boolean read by a condition: tracked, so `high`'s entry condition is
    # evaluated on its value (false until `low` is left with n == 0), never assumed
    exploration = explored(BRANCHES)
    chart = chart_of(BRANCHES)
    words = {
        a.describe(chart)
        for node in exploration.nodes
        for branch in node.outcomes or ()
        for a in branch.assumptions
    }
    assert not any("ctx.flag" in w for w in words)


EVENT_TYPES = """
statechart: kinds
events: {PAY: {}, NOTE: {}}
initial: open
states:
  open:
    on:
      PAY: {do: [{raise: NOTE}]}
      NOTE:
        - {to: noted, if: "_event.type == 'internal'"}
        - {if: "_event.type == 'external'", else: NEVER}
  noted:
    on:
      NOTE: {to: open, if: "_event.type == 'external' and _event.name == 'NOTE'"}
    reject: {PAY: NOTED}
"""


def test_what_the_event_is_decides_a_condition_exactly_in_the_analysis() -> None:
    # `_event.type` and `_event.name` are known in every run: no assumption is made, and
    # the external NOTE in `open` never takes the internal alternative
    exploration = explored(EVENT_TYPES)
    chart = chart_of(EVENT_TYPES)
    assert not any(branch.assumptions for n in exploration.nodes for branch in n.outcomes or ())
    outcomes = {
        (node.id, branch.event): (branch.target, branch.basis)
        for node in exploration.nodes
        for branch in node.outcomes or ()
    }
    assert outcomes[(0, "NOTE")] == (0, "applied")  # the external alternative: stays
    assert outcomes[(0, "PAY")] == (1, "applied")  # its raised NOTE is internal: noted
    assert len(outcomes) == sum(len(n.outcomes or ()) for n in exploration.nodes)
    reached = {chart.states[s].path for s in reached_states(exploration)}
    assert reached == {"open", "noted"}

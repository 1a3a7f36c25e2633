"""The `if` effect at run time: the first branch whose condition holds runs, each
condition on the context the effects before it left; a failing condition is an
evaluation error, as a failing guard is."""

from __future__ import annotations

import pytest
from chart_helpers import machine

from statekit.engine.result import EVALUATION_ERROR, Status

TIERS = """
statechart: tiers
context:
  total: {type: integer, default: 0}
  tier: {type: string, default: none}
  divisor: {type: integer, default: 1}
  entered: {type: integer, default: 0}
events:
  BUY: {amount: integer}
  BIG: {}
  DIVIDE: {}
initial: open
states:
  open:
    on:
      BUY:
        do:
          - assign: {total: ctx.total + event.amount}
          - if:
              cond: ctx.total > 100
              then:
                - assign: {tier: "'gold'"}
                - raise: BIG
              elif:
                - cond: ctx.total > 10
                  then: [{assign: {tier: "'silver'"}}]
                - cond: ctx.total > 5
                  then: []
              else: [{assign: {tier: "'basic'"}}]
          - assign: {entered: ctx.entered + 1}
      BIG: {to: vip}
      DIVIDE:
        do:
          - if: {cond: ctx.total // ctx.divisor > 1, then: [{assign: {tier: "'divided'"}}]}
  vip:
    entry:
      - if:
          cond: ctx.tier == 'gold'
          then:
            - if: {cond: ctx.total > 1000, then: [{assign: {tier: "'platinum'"}}]}
    reject: {"*": CLOSED}
"""


@pytest.mark.parametrize(
    ("amounts", "tier", "state"),
    [
        ((1,), "basic", "open"),  # no condition holds: else
        ((7,), "none", "open"),  # the second elif holds: its empty branch, nothing else
        ((11,), "silver", "open"),  # the first elif
        ((5, 6), "silver", "open"),  # the condition reads the context as assigned before it
        ((200,), "gold", "vip"),  # the first branch, its raise processed in the macrostep
        ((2000,), "platinum", "vip"),  # a nested if in an entry action
    ],
)
def test_the_first_branch_whose_condition_holds_runs(
    amounts: tuple[int, ...], tier: str, state: str
) -> None:
    chart = machine(TIERS)
    current = chart.start()
    for amount in amounts:
        result = chart.send(current, "BUY", {"amount": amount})
        assert result.status is Status.APPLIED
        current = result.state
    assert current.context["tier"] == tier
    assert current.configuration == frozenset({state})
    assert current.context["entered"] == len(amounts)  # the effects after the if ran


def test_a_condition_that_fails_to_evaluate_rejects_the_event_with_evaluation_error() -> None:
    chart = machine(TIERS.replace("divisor: {type: integer, default: 1}", "divisor: integer"))
    result = chart.send(chart.start(), "DIVIDE", {})
    assert (result.status, result.reason) == (Status.REJECTED, EVALUATION_ERROR)
    assert result.message is not None and "ctx.total // ctx.divisor > 1" in result.message

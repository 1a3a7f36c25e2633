"""The analysis over `done.state.<path>` handled in `on:`: the explorer runs the done
event inside the macrostep that raised it (a stable configuration never has one
pending), so no state is asked to classify it, a transition on it that the engine
takes is not unreachable, and a state that only a done event would leave, once it is
stable, is dead."""

from __future__ import annotations

from chart_helpers import machine

from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_source

FULFILMENT = """\
statechart: fulfilment
context:
  paid: {type: integer, default: 0}
events:
  PAY: {amount: integer}
  SHIP: {}
initial: work
states:
  work:
    parallel: true
    on:
      done.state.work.payment: {do: [{emit: {type: Receipt, payload: {amount: event.amount}}}]}
    done: delivered
    states:
      payment:
        initial: unpaid
        states:
          unpaid: {on: {PAY: {to: paid, do: [{assign: {paid: event.amount}}]}}}
          paid: {final: true, output: {amount: ctx.paid}, already: [PAY]}
      shipping:
        initial: packing
        states:
          packing: {on: {SHIP: shipped}}
          shipped: {final: true, already: [SHIP]}
  delivered: {final: true}
"""

LEFT_FIRST = """\
statechart: left_first
events: {FINISH: {}, LEAVE: {}}
initial: work
states:
  work:
    initial: doing
    on: {LEAVE: after}
    states:
      doing: {on: {FINISH: finished}}
      finished: {final: true, entry: [{raise: LEAVE}]}
  after:
    on:
      done.state.work: end
  end: {final: true}
"""


def test_a_chart_handling_a_regions_done_event_on_its_parallel_state_lints_clean() -> None:
    report = lint_source(FULFILMENT, "fulfilment.yaml", LintConfig())
    assert report.diagnostics == ()
    chart = machine(FULFILMENT)
    paid = chart.send(chart.start(), "PAY", {"amount": 30})
    assert [(m.type, dict(m.payload)) for m in paid.emitted] == [("Receipt", {"amount": 30})]


def test_a_state_only_a_done_event_leaves_is_dead_once_stable() -> None:
    report = lint_source(LEFT_FIRST, "left_first.yaml", LintConfig())
    found = {(d.slug, d.span.line) for d in report.diagnostics}
    # FINISH: LEAVE is dequeued first and enters `after`, which takes done.state.work
    chart = machine(LEFT_FIRST)
    assert chart.send(chart.start(), "FINISH").state.configuration == frozenset({"end"})
    # an external LEAVE enters `after` with no done event pending: it is never left
    assert ("dead-state", 11) in found
    assert not any("done.state" in d.message for d in report.diagnostics)
    assert not any(d.slug == "unreachable-transition" for d in report.diagnostics)

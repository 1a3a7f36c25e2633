"""`_event` at run time: the name and type of the event being processed (external for
one delivered to the instance, internal for one a `raise` queued), its data the payload,
origin and invokeid null; a chart that never reads it is evaluated with the plain
payload."""

from __future__ import annotations

from chart_helpers import machine

from statekit.engine.result import Status

CHART = """
statechart: seen
context:
  names: {type: string, default: ""}
  kinds: {type: string, default: ""}
  amount: {type: integer, default: 0}
  no_origin: {type: boolean, default: false}
events:
  PAY: {amount: integer}
  NOTE: {}
initial: open
states:
  open:
    on:
      PAY:
        do:
          - assign:
              names: ctx.names + _event.name + ';'
              kinds: ctx.kinds + _event.type + ';'
              amount: _event.data.amount
              no_origin: _event.origin is None and _event.invokeid is None
          - raise: NOTE
      NOTE:
        - to: noted
          if: _event.type == 'internal'
          do:
            - assign:
                names: ctx.names + _event.name + ';'
                kinds: ctx.kinds + _event.type + ';'
        - {if: "_event.type == 'external'", else: NOT_FROM_OUTSIDE}
  noted:
    on:
      NOTE: {to: open, if: "_event.type == 'external'"}
    reject: {PAY: NOTED}
"""


def test_event_names_the_event_and_its_type_external_then_internal() -> None:
    chart = machine(CHART)
    result = chart.send(chart.start(), "PAY", {"amount": 7})
    assert result.status is Status.APPLIED
    context = result.state.context
    assert context["names"] == "PAY;NOTE;"
    assert context["kinds"] == "external;internal;"
    assert context["amount"] == 7
    assert context["no_origin"] is True
    assert result.state.configuration == frozenset({"noted"})


def test_the_same_event_delivered_from_outside_is_external() -> None:
    chart = machine(CHART)
    at_open = chart.send(chart.start(), "NOTE", {})
    assert at_open.status is Status.APPLIED  # the external alternative, targetless
    assert at_open.state.configuration == frozenset({"open"})
    paid = chart.send(chart.start(), "PAY", {"amount": 1}).state
    back = chart.send(paid, "NOTE", {})
    assert back.status is Status.APPLIED
    assert back.state.configuration == frozenset({"open"})


def test_results_and_evidence_show_the_payload_only() -> None:
    chart = machine(CHART)
    result = chart.send(chart.start(), "PAY", {"amount": 7})
    first, second = result.evidence
    assert dict(first.payload) == {"amount": 7}
    assert dict(second.payload) == {}

"""Charts of a family for the runner's tests: an order that invokes a payment and a
shipment from one parallel state and is fulfilled when both are done, and can be
cancelled while they run (which cancels them)."""

from __future__ import annotations

from pathlib import Path

from runner_charts import chart_from, write_chart

from statekit.engine.chart import Chart

PAYMENT = """
statechart: payment
version: 1
description: A payment authorized or declined by the provider.
context:
  order_id: {type: string, default: ""}
  amount: {type: integer, default: 0}
  ref: {type: string, default: ""}
events:
  Authorized: {ref: string}
  Declined: {}
initial: pending
states:
  pending:
    on:
      Authorized: {to: paid, do: [{assign: {ref: event.ref}}]}
      Declined: declined
  paid:
    final: true
    output: {ref: ctx.ref}
  declined:
    final: true
    output: {ref: '""'}
"""

SHIPMENT = """
statechart: shipment
version: 1
description: A shipment that is packed, then delivered.
context:
  order_id: {type: string, default: ""}
  tracking: {type: string, default: ""}
events:
  Packed: {tracking: string}
  Delivered: {}
initial: packing
states:
  packing:
    on:
      Packed: {to: travelling, do: [{assign: {tracking: event.tracking}}]}
  travelling:
    on:
      Delivered: delivered
  delivered:
    final: true
    output: {tracking: ctx.tracking}
"""

ORDER = """
statechart: order
version: 1
description: An order that pays and ships at once and is fulfilled when both are done.
context:
  total: {type: integer, default: 0}
  payment_ref: {type: string, default: ""}
  tracking: {type: string, default: ""}
events:
  Place: {total: integer}
  Cancel: {}
initial: new
states:
  new:
    on:
      Place: {to: fulfilling, do: [{assign: {total: event.total}}]}
  fulfilling:
    parallel: true
    on:
      Cancel: cancelled
    done: fulfilled
    states:
      paying:
        initial: waiting
        states:
          waiting:
            invoke:
              id: payment
              chart: payment
              input: {amount: ctx.total}
              output: {ref: string}
            on:
              done.invoke.payment:
                to: paid
                do: [{assign: {payment_ref: event.ref}}]
              error.invoke.payment: paid
          paid: {final: true}
      shipping:
        initial: waiting
        states:
          waiting:
            invoke:
              id: shipment
              chart: shipment
              output: {tracking: string}
            on:
              done.invoke.shipment:
                to: shipped
                do: [{assign: {tracking: event.tracking}}]
              error.invoke.shipment: shipped
          shipped: {final: true}
  fulfilled: {final: true}
  cancelled: {final: true}
"""


def family() -> tuple[Chart, Chart, Chart]:
    """The order, payment and shipment charts."""
    return (
        chart_from(ORDER, "order.yaml"),
        chart_from(PAYMENT, "payment.yaml"),
        chart_from(SHIPMENT, "shipment.yaml"),
    )


def write_family(folder: Path) -> list[Path]:
    """The three charts written to `folder` (for CLI and killed processes)."""
    return [
        write_chart(ORDER, folder, "order"),
        write_chart(PAYMENT, folder, "payment"),
        write_chart(SHIPMENT, folder, "shipment"),
    ]

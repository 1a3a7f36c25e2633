"""A minimal family of charts (an order invoking a payment) and ways to break it, for the
tests of the analysis across charts: lint's family rules, races with a child, the docs'
links between pages."""

from __future__ import annotations

from pathlib import Path

PAYMENT = """\
statechart: payment
version: 1
description: Takes one payment for an order.
context:
  order_id: string
  amount: integer
  reference: string
events:
  CAPTURED: {reference: string}
  DECLINED: {}
initial: pending
states:
  pending:
    on:
      CAPTURED: {to: paid, do: [{assign: {reference: event.reference}}]}
      DECLINED: declined
  paid:
    final: true
    output: {ref: ctx.reference}
    reject: {"*": PAID}
  declined:
    final: true
    output: {ref: ctx.order_id}
    reject: {"*": DECLINED}
"""

ORDER = """\
statechart: order
version: 1
description: An order that is paid by a payment chart.
context:
  order_id: string
  total: integer
  payment_ref: string
events:
  CANCEL: {}
initial: paying
states:
  paying:
    invoke:
      - id: payment
        chart: payment
        input: {order_id: ctx.order_id, amount: ctx.total}
        output: {ref: string}
    on:
      done.invoke.payment: {to: paid, do: [{assign: {payment_ref: event.ref}}]}
      error.invoke.payment: failed
      CANCEL: cancelled
  paid:
    final: true
    reject: {"*": PAID}
  failed:
    final: true
    reject: {"*": FAILED}
  cancelled:
    final: true
    reject: {"*": CANCELLED}
"""


def write_family(folder: Path, **texts: str) -> Path:
    """The correct family in `folder` (`order.yaml`, `payment.yaml`), with the files named
    in `texts` (`order=...`) replaced or added; the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"order": ORDER, "payment": PAYMENT, **texts}
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


def position(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """(line, column), 1-based, of the `occurrence`-th `needle` in `text`."""
    index = -1
    for _ in range(occurrence):
        index = text.index(needle, index + 1)
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1

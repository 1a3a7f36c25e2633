"""Invoked charts in the drawings and the docs: each invoke a box in its state, linked to
the child's page (DOT, SVG), listed in the Mermaid text, and the pages linked both ways."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from chart_helpers import dot_program  # noqa: F401  (a fixture)
from cli_process import statekit
from order_payment_family import ORDER, write_family

from statekit.compiler.pipeline import compile_source
from statekit.diagrams.dot import to_dot
from statekit.diagrams.mermaid import to_mermaid
from statekit.diagrams.model import EffectDetail, extract
from statekit.diagrams.views import Split, plan_views

needs_dot = pytest.mark.usefixtures("dot_program")


def _site(tmp_path: Path) -> Path:
    folder = write_family(tmp_path / "charts")
    out = tmp_path / "site"
    done = statekit("docs", str(folder), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_a_lone_diagram_draws_the_invoke_box_without_a_link() -> None:
    chart = compile_source(ORDER, "order.yaml").chart
    assert chart is not None
    (view,) = plan_views(extract(chart), Split.AUTO, EffectDetail.SHORT, 40)
    dot = to_dot(view)
    assert "shape=component" in dot and "<B>payment</B>" in dot
    assert "URL=" not in dot
    assert "invoke payment → payment" in to_mermaid(view)


def test_docs_link_the_invoke_box_to_the_childs_page(tmp_path: Path) -> None:
    out = _site(tmp_path)
    dot = (out / "order.dot").read_text(encoding="utf-8")
    (box,) = [line for line in dot.splitlines() if "shape=component" in line]
    assert 'URL="payment.md"' in box
    assert "URL=" not in (out / "payment.dot").read_text(encoding="utf-8")


def test_docs_pages_link_invoked_charts_both_ways(tmp_path: Path) -> None:
    out = _site(tmp_path)
    order = (out / "order.md").read_text(encoding="utf-8")
    payment = (out / "payment.md").read_text(encoding="utf-8")
    assert "## Invoked charts" in order
    assert "| `paying` | `payment` | [payment](payment.md) | newest |" in order
    assert "## Invoked by" in payment
    assert "| [order](order.md) | `paying` | `payment` |" in payment
    assert "## Invoked by" not in order and "## Invoked charts" not in payment
    assert "invoke payment → payment" in order  # the Mermaid block
    check = statekit("docs", str(tmp_path / "charts"), "-o", str(out), "--check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_child_outside_the_docs_is_named_without_a_link(tmp_path: Path) -> None:
    folder = tmp_path / "charts"
    folder.mkdir()
    (folder / "order.yaml").write_text(ORDER, encoding="utf-8")
    out = tmp_path / "site"
    statekit("docs", str(folder), "-o", str(out))
    order = (out / "order.md").read_text(encoding="utf-8")
    assert "| `paying` | `payment` | payment | newest (not among these charts) |" in order
    assert "URL=" not in (out / "order.dot").read_text(encoding="utf-8")


@needs_dot
def test_the_svg_box_is_a_link_to_the_childs_page(tmp_path: Path) -> None:
    out = _site(tmp_path)
    root = ET.parse(out / "order.svg").getroot()
    links = [
        element.get("{http://www.w3.org/1999/xlink}href") or element.get("href")
        for element in root.iter()
        if element.tag.endswith("}a")
    ]
    assert "payment.md" in links


def test_the_committed_docs_of_the_reference_machines_are_unchanged() -> None:
    done = statekit("docs", "machines/", "-o", "docs/machines", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_example_familys_pages_link_parent_and_children(tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = statekit("docs", "examples/order_family", "-o", str(out))
    assert done.returncode == 0, done.stderr
    order = (out / "order.md").read_text(encoding="utf-8")
    assert "[payment](payment.md)" in order and "[shipment](shipment.md)" in order
    for child in ("payment", "shipment"):
        page = (out / f"{child}.md").read_text(encoding="utf-8")
        assert "## Invoked by" in page and "[order](order.md)" in page


LEDGER = """\
statechart: ledger
version: 1
description: Books refunds.
context:
  refunds: integer
events:
  REFUND: {}
initial: open
states:
  open:
    on:
      REFUND: {do: [{assign: {refunds: ctx.refunds + 1}}]}
"""

ORDER_REFUNDING = ORDER.replace(
    "      CANCEL: cancelled\n",
    "      CANCEL:\n        to: cancelled\n        do:\n"
    "          - send: {event: REFUND, to: {chart: ledger, instance: ctx.order_id}, "
    "reply: REFUND_ACK}\n",
).replace(
    "  CANCEL: {}\n",
    "  CANCEL: {}\n  REFUND_ACK: {status: string, reason: {type: string, nullable: true}}\n",
)
"""An order that messages a ledger instance when cancelled, with a reply."""


def test_a_send_to_another_chart_shows_its_target_on_the_label() -> None:
    chart = compile_source(ORDER_REFUNDING, "order.yaml").chart
    assert chart is not None
    (view,) = plan_views(extract(chart), Split.AUTO, EffectDetail.SHORT, 40)
    assert "/ send REFUND → ledger</TD>" in to_dot(view)


def test_docs_pages_link_a_send_to_another_chart_both_ways(tmp_path: Path) -> None:
    folder = write_family(tmp_path / "charts", order=ORDER_REFUNDING, ledger=LEDGER)
    out = tmp_path / "site"
    done = statekit("docs", str(folder), "-o", str(out))
    assert done.returncode == 0, done.stderr
    order = (out / "order.md").read_text(encoding="utf-8")
    ledger = (out / "ledger.md").read_text(encoding="utf-8")
    assert "## Sends to" in order
    assert "| `REFUND` | [ledger](ledger.md) | `ctx.order_id` | `REFUND_ACK` |" in order
    assert "## Receives from" in ledger
    assert "| [order](order.md) | `REFUND` |" in ledger
    assert "## Sends to" not in ledger and "## Receives from" not in order
    assert "## Sends to" not in (out / "payment.md").read_text(encoding="utf-8")
    assert "send REFUND → ledger (ctx.order_id), reply REFUND_ACK" in order  # transitions

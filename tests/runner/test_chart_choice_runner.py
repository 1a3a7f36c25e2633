"""A durable family whose child's chart is chosen by an expression (`chart: {by, cases}`):
the child row records the chart its case chose, `verify` replays the parent's steps to
the same choice, and a value with no case stores no child (SQLite)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

FAMILY = Path(__file__).parents[2] / "examples" / "payment_choice"


def _runner(tmp_path: Path) -> Runner:
    order, card, invoice = (
        statekit.load(FAMILY / f"{name}.yaml")
        for name in ("order", "card_payment", "invoice_payment")
    )
    return Runner(order, open_store(f"sqlite:///{tmp_path / 'orders.db'}"), charts=[card, invoice])


def test_each_order_starts_the_chart_its_method_chooses_and_verifies(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    runner.create("o1", {"order_id": "A1", "total": 30, "method": "card"})
    runner.create("o2", {"order_id": "A2", "total": 40, "method": "invoice"})
    store = runner.store
    with store.read():
        rows = {i: store.instance(i) for i in ("o1/pay/0", "o2/pay/0")}
    assert {i: r.chart_name for i, r in rows.items() if r is not None} == {
        "o1/pay/0": "card_payment",
        "o2/pay/0": "invoice_payment",
    }
    runner.apply("o2/pay/0", "t1", "transferred", {"ref": "BANK-7"})
    assert runner.load("o2").state.configuration == {"paid"}
    assert runner.load("o2").state.context["payment_ref"] == "BANK-7"
    assert [link.status for link in store.children("o1")] == ["active"]
    assert [link.status for link in store.children("o2")] == ["done"]
    for instance_id in ("o1", "o1/pay/0", "o2", "o2/pay/0"):
        report = runner.verify(instance_id)
        assert report.ok, (instance_id, report.differences)


def test_a_method_with_no_case_stores_no_child_and_fails_the_order(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    runner.create("o3", {"order_id": "A3", "total": 5, "method": "cash"})
    assert runner.load("o3").state.configuration == {"failed"}
    assert list(runner.store.children("o3")) == []
    with runner.store.read():
        assert runner.store.instance("o3/pay/0") is None
    assert runner.verify("o3").ok


def test_verify_reports_a_child_of_another_chart_than_its_case_chose(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    runner.create("o1", {"order_id": "A1", "total": 30, "method": "card"})
    with sqlite3.connect(tmp_path / "orders.db") as db:  # a row written by something else
        db.execute(
            "UPDATE statekit_instances SET chart_name = 'invoice_payment' "
            "WHERE instance_id = 'o1/pay/0'"
        )
    report = runner.verify("o1")
    assert report.differences == (
        "family: instance 'o1/pay/0': its chart is 'invoice_payment', but its parent's step "
        "at sequence 0 started chart 'card_payment'",
    )

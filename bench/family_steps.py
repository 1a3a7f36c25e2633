"""What the family step costs: the order family through `FamilySimulator`, against the
same chart steps made by hand.

Run: `python -m bench.family_steps` from the repository root (`--runs N`, default 7).
Each order of the stream is the example family (examples/order_family/): the order
starts, invoking its payment and its shipment; the payment is authorised; the
shipment is packed and dispatched; the order completes. Through the simulator that is
one `start` and three `send`s, each a family step (`statekit.engine.family`: the
queue, the member records, the child IDs, the evaluation of input and output). By
hand it is the same nine chart steps (three `initialize`, six `send`, the
`done.invoke` payloads written out) with nothing routed. Both must end with every
order completed; each run times the hand loop and then the family, CPU time of the
process; the rows are orders per second, median (range), and the ratio per run.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import statekit
from bench import TIMES, Row, Spread, record
from statekit.engine.chart import Chart
from statekit.testing import FamilySimulator

ROOT = Path(__file__).resolve().parent.parent
FAMILY = ROOT / "examples" / "order_family"
ORDERS = 300


def _charts() -> tuple[Chart, Chart, Chart]:
    order, payment, shipment = (
        statekit.load(FAMILY / f"{name}.yaml") for name in ("order", "payment", "shipment")
    )
    return order, payment, shipment


def by_hand(order: Chart, payment: Chart, shipment: Chart) -> int:
    """The stream's chart steps made directly; the number of orders completed."""
    completed = 0
    for i in range(ORDERS):
        oid = f"o-{i}"
        o = order.initialize({"order_id": oid, "total": i}, now_ms=0).state
        p = payment.initialize({"order_id": oid, "amount": i}, now_ms=0).state
        s = shipment.initialize({"order_id": oid}, now_ms=0).state
        p = payment.send(p, "authorised", {"ref": f"p-{i}"}, now_ms=0).state
        o = order.send(o, "done.invoke.payment", {"ref": f"p-{i}", "paid": True}, now_ms=0).state
        s = shipment.send(s, "packed", now_ms=0).state
        s = shipment.send(s, "dispatched", {"tracking": f"t-{i}"}, now_ms=0).state
        o = order.send(o, "done.invoke.shipment", {"tracking": f"t-{i}"}, now_ms=0).state
        completed += o.leaves == ("completed",) and p.is_final and s.is_final
    return completed


def by_family(order: Chart, payment: Chart, shipment: Chart) -> int:
    """The stream through the family simulator; the number of orders completed."""
    sim = FamilySimulator([order, payment, shipment])
    completed = 0
    for i in range(ORDERS):
        oid = f"o-{i}"
        sim.start("order", oid, {"order_id": oid, "total": i})
        sim.send("authorised", {"ref": f"p-{i}"}, to=f"{oid}/payment/0")
        sim.send("packed", to=f"{oid}/shipment/0")
        sim.send("dispatched", {"tracking": f"t-{i}"}, to=f"{oid}/shipment/0")
        completed += sim.member(oid).state.leaves == ("completed",)
    return completed


def _rate(run: object, charts: tuple[Chart, Chart, Chart]) -> float:
    began = time.process_time()
    done = run(*charts)  # type: ignore[operator]
    took = time.process_time() - began
    assert done == ORDERS, done
    return ORDERS / took


def main(argv: list[str] | None = None) -> None:
    """Print and record orders/s by hand and through the family, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args(argv).runs
    charts = _charts()
    _rate(by_hand, charts), _rate(by_family, charts)  # both complete every order; warm-up
    hand, family, ratios = [], [], []
    for _ in range(runs):
        h, f = _rate(by_hand, charts), _rate(by_family, charts)
        hand.append(h)
        family.append(f)
        ratios.append(h / f)
    rows = [
        Row(
            what="order family, 9 chart steps per order (orders/s)",
            statekit=Spread.of(family).text(),
            limit=Spread.of(hand).text(),
            ratio=Spread.of(ratios).text(TIMES, 2),
        )
    ]
    print(f"{'what':<52} {'family':>20} {'by hand':>20} {'hand/family':>18}")
    for row in rows:
        print(f"{row.what:<52} {row.statekit:>20} {row.limit:>20} {row.ratio:>18}")
    record("family_steps", rows)


if __name__ == "__main__":
    main()

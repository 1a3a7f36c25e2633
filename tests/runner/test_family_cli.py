"""The acceptance family (examples/order_family: an order invoking a payment and a
shipment from one parallel state) through the real commands on both stores: children
fed by `statekit run` with the family's charts, a child's timer delivered by `statekit
worker` (it declines the payment, which fails the order and cancels the shipment), and
`statekit verify` checking every member and link."""

from __future__ import annotations

import json

from cli_process import ROOT, statekit

import statekit as sk
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

FAMILY = ROOT / "examples" / "order_family"
START_MS = 1_000_000


def test_the_order_family_runs_through_the_commands(store_url: str) -> None:
    order, payment, shipment = (sk.load(FAMILY / f"{n}.yaml")
                                for n in ("order", "payment", "shipment"))  # fmt: skip
    runner = Runner(
        order, open_store(store_url), charts=[payment, shipment], clock=lambda: START_MS
    )
    runner.create("o1", {"order_id": "A1", "total": 30})  # its children start with it
    runner.create("o2", {"order_id": "A2", "total": 40})
    runner.store.close()
    lines = [
        {"instance": "o1/shipment/0", "event_id": "s1", "type": "packed"},
        {"instance": "o1/shipment/0", "event_id": "s2", "type": "dispatched",
         "payload": {"tracking": "T-9"}},
        {"instance": "o1/payment/0", "event_id": "p1", "type": "authorised",
         "payload": {"ref": "R-1"}},
    ]  # fmt: skip
    ran = statekit(
        "run", str(FAMILY / "order.yaml"), "--chart", str(FAMILY), "--db", store_url,
        "--now", str(START_MS + 500), stdin="".join(json.dumps(x) + "\n" for x in lines),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert [json.loads(x)["status"] for x in ran.stdout.splitlines()] == ["APPLIED"] * 3
    late = START_MS + 31 * 60 * 1000  # o2's payment gives up after 30 minutes
    worked = statekit(
        "worker", "--db", store_url, "--chart", str(FAMILY), "--once", "--now", str(late)
    )
    assert worked.returncode == 0, worked.stderr
    [fired] = [json.loads(x) for x in worked.stdout.splitlines()]
    assert (fired["instance"], fired["state"]) == ("o2/payment/0", ["declined"])
    verified = statekit("verify", "--db", store_url, "--chart", str(FAMILY))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "6 instance(s), 0 with differences" in verified.stderr
    again = Runner(order, open_store(store_url), charts=[payment, shipment])
    o1, o2 = again.load("o1"), again.load("o2")
    assert o1.state.configuration == {"completed"}
    assert (o1.state.context["payment_ref"], o1.state.context["tracking"]) == ("R-1", "T-9")
    assert o2.state.configuration == {"failed"}
    links = {c.child_instance_id: c.status for i in ("o1", "o2") for c in again.store.children(i)}
    assert links == {
        "o1/payment/0": "done",
        "o1/shipment/0": "done",
        "o2/payment/0": "done",
        "o2/shipment/0": "cancelled",
    }
    # the same lines again: every one ALREADY_APPLIED, nothing doubled
    rerun = statekit(
        "run", str(FAMILY / "order.yaml"), "--chart", str(FAMILY), "--db", store_url,
        stdin="".join(json.dumps(x) + "\n" for x in lines),
    )  # fmt: skip
    assert [json.loads(x)["status"] for x in rerun.stdout.splitlines()] == ["ALREADY_APPLIED"] * 3
    assert again.load("o1").version == o1.version

"""The durable family: an order invoking a payment and a shipment runs as family steps,
each ONE transaction on both stores: children created, fed and cancelled with the
parent's step, linked in the store, each member's step an event of its own history
under an event ID derived from the family step, so a redelivery is ALREADY_APPLIED for
all of it; `verify` checks the links against the histories."""

from __future__ import annotations

from family_machines import family

from statekit.runner.family_step import FAMILY_PREFIX
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

PAY, SHIP = "o1/payment/1", "o1/shipment/1"


def _runner(url: str) -> Runner:
    order, payment, shipment = family()
    return Runner(order, open_store(url), charts=[payment, shipment])


def _links(runner: Runner) -> list[tuple[str, str, str, str, int, str]]:
    return [
        (r.child_instance_id, r.parent_instance_id, r.invoke_id, r.root_instance_id,
         r.started_sequence, r.status)
        for r in runner.store.children("o1")
    ]  # fmt: skip


def _all_verified(runner: Runner, *ids: str) -> None:
    for instance_id in ids:
        report = runner.verify(instance_id)
        assert report.ok, (instance_id, report.differences)


def test_an_order_pays_ships_and_is_fulfilled(store_url: str) -> None:
    runner = _runner(store_url)
    runner.create("o1")
    placed = runner.apply("o1", "e1", "Place", {"total": 30})
    assert placed.applied and placed.version == 1
    assert _links(runner) == [
        (PAY, "o1", "payment", "o1", 1, "active"),
        (SHIP, "o1", "shipment", "o1", 1, "active"),
    ]
    assert runner.load(PAY).state.context["amount"] == 30  # the invocation's input
    assert runner.load(PAY).chart_name == "payment"
    # an event for a child is routed through its link (the root locked first)
    paid = runner.apply(PAY, "p1", "Authorized", {"ref": "R-7"})
    assert paid.applied and runner.load(PAY).state.is_final
    order = runner.load("o1")
    assert order.state.context["payment_ref"] == "R-7"
    assert [e.type for e in runner.history("o1")] == ["Place", "done.invoke.payment"]
    # the event ID the router derives from the child step that sent it
    assert runner.history("o1")[1].event_id == f"{FAMILY_PREFIX}{PAY}@1#1"
    assert runner.apply(SHIP, "s1", "Packed", {"tracking": "T-1"}).applied
    assert runner.apply(SHIP, "s2", "Delivered", {}).applied
    order = runner.load("o1")
    assert order.state.is_final and order.state.context["tracking"] == "T-1"
    assert [s for *_, s in _links(runner)] == ["done", "done"]
    _all_verified(runner, "o1", PAY, SHIP)


def test_a_redelivered_family_step_is_already_applied_for_all_of_it(store_url: str) -> None:
    runner = _runner(store_url)
    runner.create("o1")
    runner.apply("o1", "e1", "Place", {"total": 30})
    runner.apply(PAY, "p1", "Authorized", {"ref": "R-7"})
    before = {i: runner.load(i).version for i in ("o1", PAY, SHIP)}
    again = Runner(*family()[:1], runner.store, charts=family()[1:])  # a fresh runner
    assert again.apply("o1", "e1", "Place", {"total": 30}).status.value == "ALREADY_APPLIED"
    assert again.apply(PAY, "p1", "Authorized", {"ref": "R-7"}).duplicate
    assert {i: again.load(i).version for i in ("o1", PAY, SHIP)} == before
    assert len(again.store.children("o1")) == 2
    _all_verified(again, "o1", PAY, SHIP)


def test_leaving_the_invoking_state_cancels_the_children(store_url: str) -> None:
    runner = _runner(store_url)
    runner.create("o1")
    runner.apply("o1", "e1", "Place", {"total": 30})
    runner.apply(PAY, "p1", "Authorized", {"ref": "R-7"})  # payment done first
    assert runner.apply("o1", "e2", "Cancel", {}).applied
    assert [s for *_, s in _links(runner)] == ["done", "cancelled"]
    late = runner.apply(SHIP, "s1", "Packed", {"tracking": "T-1"})
    assert (late.status.value, late.reason) == ("REJECTED", "INVOCATION_CANCELLED")
    assert runner.load(SHIP).version == 0
    _all_verified(runner, "o1", PAY, SHIP)


def test_verify_reports_each_family_disagreement(store_url: str) -> None:
    runner = _runner(store_url)
    runner.create("o1")
    runner.apply("o1", "e1", "Place", {"total": 30})
    store = runner.store
    with store.write():  # a status that disagrees with the child's history
        store.execute(
            "UPDATE statekit_family_links SET status = 'done' WHERE invoke_id = 'shipment'"
        )
    [problem] = [d for d in runner.verify(SHIP).differences if d.startswith("family:")]
    assert problem == f"family: instance {SHIP!r}: status: stored done, its chart is not final"
    with store.write():  # a parent whose history started a child with no link
        store.execute("DELETE FROM statekit_family_links WHERE invoke_id = 'shipment'")
    found = [d for d in runner.verify("o1").differences if d.startswith("family:")]
    assert found == [
        f"family: instance 'o1': its history started child {SHIP!r} (invoke 'shipment' at "
        "sequence 1), which has no link"
    ]
    with store.write():  # a child without a parent history entry
        store.execute(
            "UPDATE statekit_family_links SET started_sequence = 5 WHERE invoke_id = 'payment'"
        )
    found = [d for d in runner.verify("o1").differences if d.startswith("family:")]
    assert any("a child without a parent history entry" in d for d in found), found

"""Random event streams to the example order family (order, payment, shipment) agree,
after every step, with a reference model written by hand from the rules of
docs/semantics.md "Invoking charts": which instances exist, their status, their
active states and the order's context."""

from __future__ import annotations

from dataclasses import dataclass

from family_charts import started_order
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.engine.family_members import MemberStatus
from statekit.testing import FamilySimulator

PAYMENT, SHIPMENT = "o-1/payment/0", "o-1/shipment/0"
TIMEOUT_MS = 30 * 60_000
ACTIVE, DONE, CANCELLED = MemberStatus.ACTIVE, MemberStatus.DONE, MemberStatus.CANCELLED


@dataclass
class OrderFamilyModel:
    """The order family by hand: each member's leaf state(s) and status."""

    order: tuple[str, ...] = ("fulfilling.payment.paying", "fulfilling.delivery.shipping")
    order_status: MemberStatus = ACTIVE
    payment: str = "authorising"
    payment_status: MemberStatus = ACTIVE
    shipment: str = "packing"
    shipment_status: MemberStatus = ACTIVE
    payment_ref: str = ""
    tracking: str = ""
    elapsed_ms: int = 0

    # ---- the children's own steps, then what reaches the order ----
    def authorised(self, ref: str) -> None:
        if self.payment_status is ACTIVE and self.payment == "authorising":
            self.payment, self.payment_status = "paid", DONE
            self._payment_done(paid=True, ref=ref)

    def declined(self) -> None:
        if self.payment_status is ACTIVE and self.payment == "authorising":
            self.payment, self.payment_status = "declined", DONE
            self._payment_done(paid=False, ref="")

    def packed(self) -> None:
        if self.shipment_status is ACTIVE and self.shipment == "packing":
            self.shipment = "ready"

    def dispatched(self, tracking: str) -> None:
        if self.shipment_status is ACTIVE and self.shipment == "ready":
            self.shipment, self.shipment_status = "shipped", DONE
            if self._fulfilling():  # done.invoke.shipment
                self.tracking = tracking
                self.order = (self.order[0], "fulfilling.delivery.shipped")
                self._maybe_completed()

    def cancel(self) -> None:
        if self._fulfilling():
            self._leave_fulfilling("cancelled")

    def advance(self, ms: int) -> None:
        before, self.elapsed_ms = self.elapsed_ms, self.elapsed_ms + ms
        if before < TIMEOUT_MS <= self.elapsed_ms:  # the payment's 30m timer, if running
            self.declined()

    def _fulfilling(self) -> bool:
        return self.order[0].startswith("fulfilling")

    def _payment_done(self, *, paid: bool, ref: str) -> None:
        if not self._fulfilling():
            return
        if paid:
            self.payment_ref = ref
            self.order = ("fulfilling.payment.paid", self.order[1])
            self._maybe_completed()
        else:
            self._leave_fulfilling("failed")

    def _maybe_completed(self) -> None:
        if self.order == ("fulfilling.payment.paid", "fulfilling.delivery.shipped"):
            self.order, self.order_status = ("completed",), DONE

    def _leave_fulfilling(self, to: str) -> None:
        self.order, self.order_status = (to,), DONE
        if self.payment_status is ACTIVE:
            self.payment_status = CANCELLED
        if self.shipment_status is ACTIVE:
            self.shipment_status = CANCELLED


def observed(sim: FamilySimulator) -> tuple[object, ...]:
    order, payment, shipment = (sim.member(i) for i in ("o-1", PAYMENT, SHIPMENT))
    return (
        order.state.leaves,
        order.status,
        payment.state.leaves,
        payment.status,
        shipment.state.leaves,
        shipment.status,
        order.state.context["payment_ref"],
        order.state.context["tracking"],
        set(sim.members),
    )


def expected(model: OrderFamilyModel) -> tuple[object, ...]:
    return (
        model.order,
        model.order_status,
        (model.payment,),
        model.payment_status,
        (model.shipment,),
        model.shipment_status,
        model.payment_ref,
        model.tracking,
        {"o-1", PAYMENT, SHIPMENT},
    )


ACTIONS = st.one_of(
    st.tuples(st.just("authorised"), st.sampled_from(["p-1", "p-2"])),
    st.tuples(st.just("declined"), st.just("")),
    st.tuples(st.just("packed"), st.just("")),
    st.tuples(st.just("dispatched"), st.sampled_from(["T-1", "T-2"])),
    st.tuples(st.just("cancel"), st.just("")),
    st.tuples(st.just("advance"), st.sampled_from([60_000, 10 * 60_000, 25 * 60_000])),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(ACTIONS, max_size=12))
def test_random_streams_agree_with_the_reference_model(
    actions: list[tuple[str, str | int]],
) -> None:
    sim, model = started_order(), OrderFamilyModel()
    assert observed(sim) == expected(model)
    for name, argument in actions:
        if name == "authorised":
            sim.send("authorised", {"ref": argument}, to=PAYMENT)
            model.authorised(str(argument))
        elif name == "declined":
            sim.send("declined", to=PAYMENT)
            model.declined()
        elif name == "packed":
            sim.send("packed", to=SHIPMENT)
            model.packed()
        elif name == "dispatched":
            sim.send("dispatched", {"tracking": argument}, to=SHIPMENT)
            model.dispatched(str(argument))
        elif name == "cancel":
            sim.send("cancel", to="o-1")
            model.cancel()
        else:
            assert isinstance(argument, int)
            sim.advance(argument)
            model.advance(argument)
        assert observed(sim) == expected(model), (name, argument)

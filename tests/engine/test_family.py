"""The family step (`statekit.engine.family`) through `FamilySimulator`: the order of
starts, cancellation on exit, done with output, error.invoke (refused input, unknown
chart, evaluation errors), the bound, child IDs, sends between parent and child, a
child's timer, and messages to other instances."""

from __future__ import annotations

from pathlib import Path

import pytest
from family_charts import ECHO, TALKER, load_text, order_family, started_order

import statekit
from statekit.engine.family import (
    FAMILY_BOUND,
    INVALID_INPUT,
    INVOCATION_CANCELLED,
    NO_RECEIVER,
    UNKNOWN_CHART,
    FamilyRouter,
)
from statekit.engine.family_members import DeliveryKind, MemberStatus
from statekit.engine.result import EVALUATION_ERROR, Status
from statekit.testing import FamilySimulator, FamilyStep

PAYMENT, SHIPMENT = "o-1/payment/0", "o-1/shipment/0"


def trail(step: FamilyStep) -> list[tuple[str, str, str]]:
    """(kind, target, event) of each delivery of a family step."""
    return [(r.delivery.kind.value, r.delivery.target, r.delivery.event) for r in step.records]


def test_the_children_start_at_the_end_of_the_macrostep_in_entry_order() -> None:
    sim = FamilySimulator(order_family())
    step = sim.start("order", "o-1", {"order_id": "o-1", "total": 30})
    assert trail(step) == [
        ("start", "o-1", ""),
        ("start", PAYMENT, ""),
        ("start", SHIPMENT, ""),
    ]
    order = sim.member("o-1")
    assert dict(order.children) == {"payment": PAYMENT, "shipment": SHIPMENT}
    payment = sim.member(PAYMENT)
    assert (payment.parent, payment.invoke_id, payment.root) == ("o-1", "payment", "o-1")
    assert dict(payment.state.context) == {"order_id": "o-1", "amount": 30, "ref": ""}
    assert sim.member(SHIPMENT).state.leaves == ("packing",)


def test_done_with_output_reaches_the_parent_and_both_done_complete_the_order() -> None:
    sim = started_order()
    step = sim.send("authorised", {"ref": "p-7"}, to=PAYMENT)
    assert trail(step) == [
        ("event", PAYMENT, "authorised"),
        ("event", "o-1", "done.invoke.payment"),
    ]
    assert dict(step.records[1].delivery.payload) == {"ref": "p-7", "paid": True}
    assert sim.status(PAYMENT) is MemberStatus.DONE
    assert "payment" not in sim.member("o-1").children  # a done child is unlinked
    sim.send("packed", to=SHIPMENT)
    sim.send("dispatched", {"tracking": "T-1"}, to=SHIPMENT)
    order = sim.member("o-1")
    assert order.state.leaves == ("completed",)
    assert order.status is MemberStatus.DONE
    assert dict(order.state.context) == {
        "order_id": "o-1",
        "total": 30,
        "payment_ref": "p-7",
        "tracking": "T-1",
    }


def test_leaving_the_invoking_state_cancels_the_children_in_exit_order() -> None:
    sim = started_order()
    step = sim.send("cancel", to="o-1")
    # the regions are left in reverse document order: delivery first, then payment
    assert trail(step) == [
        ("event", "o-1", "cancel"),
        ("cancel", SHIPMENT, ""),
        ("cancel", PAYMENT, ""),
    ]
    assert sim.status(PAYMENT) is MemberStatus.CANCELLED
    assert sim.status(SHIPMENT) is MemberStatus.CANCELLED
    late = sim.send("authorised", {"ref": "p-7"}, to=PAYMENT)
    assert late.reason == INVOCATION_CANCELLED and late.result is None
    assert sim.member(PAYMENT).state.leaves == ("authorising",)
    # a cancelled child's timer is disarmed: 30 minutes later nothing fires
    assert sim.advance(31 * 60_000) == []
    assert sim.member("o-1").state.leaves == ("cancelled",)


def test_a_childs_timer_fires_on_the_shared_clock_and_its_done_moves_the_parent() -> None:
    sim = started_order()
    assert sim.advance(29 * 60_000) == []
    (step,) = sim.advance(60_000)
    assert trail(step) == [
        ("timer", PAYMENT, "after(30m)@authorising"),
        ("event", "o-1", "done.invoke.payment"),
        ("cancel", SHIPMENT, ""),  # the order failed: leaving fulfilling cancels the shipment
    ]
    assert dict(step.records[1].delivery.payload) == {"ref": "", "paid": False}
    assert sim.member("o-1").state.leaves == ("failed",)
    assert sim.status(SHIPMENT) is MemberStatus.CANCELLED


def test_child_ids_are_parent_invoke_and_parent_version(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)])
    sim.start("talker", "t")
    assert dict(sim.member("t").children) == {"echo": "t/echo/0"}
    step = sim.send("restart", to="t")  # leaves and enters `talking`: a new child
    assert trail(step) == [
        ("event", "t", "restart"),
        ("cancel", "t/echo/0", ""),
        ("start", "t/echo/1", ""),
    ]
    assert dict(sim.member("t").children) == {"echo": "t/echo/1"}
    assert sim.status("t/echo/0") is MemberStatus.CANCELLED


def test_send_to_a_child_by_invoke_id_and_to_the_parent(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)])
    sim.start("talker", "t")
    step = sim.send("poke", to="t")
    assert trail(step) == [
        ("event", "t", "poke"),
        ("event", "t/echo/0", "ping"),
        ("event", "t", "pong"),
    ]
    assert dict(step.records[1].delivery.payload) == {"n": 0}
    assert dict(step.records[2].delivery.payload) == {"n": 2}  # the child's input: step 2
    pong = step.records[2].result
    assert pong is not None and (pong.status, pong.reason) == (Status.REJECTED, "NOT_LOOPING")
    assert sim.member("t/echo/0").state.context["seen"] == 1


def test_own_sends_and_sends_to_a_child_queue_in_effect_order(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)])
    sim.start("talker", "t")
    step = sim.send("twice", to="t")
    assert trail(step) == [
        ("event", "t", "twice"),
        ("event", "t/echo/0", "ping"),
        ("event", "t", "note"),
        ("event", "t/echo/0", "ping"),
        ("event", "t", "pong"),  # the child's answers join the end of the queue
        ("event", "t", "pong"),
    ]
    assert [r.delivery.event_id for r in step.records[1:4]] == ["t@1#1", "t@1#2", "t@1#3"]


def test_the_invoking_states_entry_reaches_the_child_it_starts(tmp_path: Path) -> None:
    entry = "    entry: [{send: {to: echo, event: ping, payload: {n: 5}}}]\n    invoke: {id: echo,"
    talker = TALKER.replace("    invoke: {id: echo,", entry)
    sim = FamilySimulator([load_text(tmp_path, talker), load_text(tmp_path, ECHO)])
    step = sim.start("talker", "t")
    assert trail(step) == [
        ("start", "t", ""),
        ("start", "t/echo/0", ""),  # starts are queued before the sends of the macrostep
        ("event", "t/echo/0", "ping"),
        ("event", "t", "pong"),
    ]
    assert sim.member("t/echo/0").state.context["seen"] == 1


def test_a_ping_pong_stops_at_the_bound_and_changes_nothing(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)], bound=50)
    sim.start("talker", "t")
    before = dict(sim.members)
    step = sim.send("loop", to="t")
    assert step.exceeded and step.reason == FAMILY_BOUND
    assert dict(sim.members) == before
    assert sim.member("t").state.context["looping"] is False


def test_an_evaluation_error_in_a_child_is_error_invoke_in_the_parent(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)])
    sim.start("talker", "t")
    step = sim.send("crash", to="t/echo/0")
    assert trail(step) == [("event", "t/echo/0", "crash"), ("event", "t", "error.invoke.echo")]
    crash = step.records[0].result
    assert crash is not None and crash.reason == EVALUATION_ERROR
    reason = step.records[1].delivery.payload["reason"]
    assert "ZeroDivisionError" in reason
    assert sim.status("t/echo/0") is MemberStatus.ACTIVE  # it stays: leaving cancels it
    assert dict(sim.member("t").children) == {"echo": "t/echo/0"}


def _parent(input_: str, chart: str = "echo") -> str:
    return f"""\
statechart: parent
context: {{zero: {{type: integer, default: 0}}, why: {{type: string, default: ""}}}}
initial: waiting
states:
  waiting:
    invoke: {{id: child, chart: {chart}, input: {input_}}}
    on:
      error.invoke.child: {{to: failed, do: [{{assign: {{why: event.reason}}}}]}}
      done.invoke.child: failed
  failed: {{final: true}}
"""


@pytest.mark.parametrize(
    ("input_", "chart", "reason_starts"),
    [
        ("{nope: 1}", "echo", f"{INVALID_INPUT}: "),
        ("{step: \"'two'\"}", "echo", f"{INVALID_INPUT}: "),
        ("{step: 1 // ctx.zero}", "echo", f"{EVALUATION_ERROR}: "),
        ("{step: 1}", "missing", f"{UNKNOWN_CHART}: no chart 'missing'"),
    ],
    ids=["unknown field", "wrong type", "input expression fails", "unknown chart"],
)
def test_a_child_that_cannot_start_is_error_invoke(
    tmp_path: Path, input_: str, chart: str, reason_starts: str
) -> None:
    sim = FamilySimulator([load_text(tmp_path, _parent(input_, chart)), load_text(tmp_path, ECHO)])
    step = sim.start("parent", "p")
    assert trail(step)[-1] == ("event", "p", "error.invoke.child")
    assert sim.member("p").state.leaves == ("failed",)
    assert sim.member("p").state.context["why"].startswith(reason_starts)
    assert dict(sim.member("p").children) == {}
    assert [m for m in sim.members if m != "p"] == []  # no child was created


def test_a_send_to_a_child_that_is_not_running_has_no_receiver(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)])
    sim.start("talker", "t")
    sim.send("stop", to="t/echo/0")  # the child is done: the parent forgets it
    assert dict(sim.member("t").children) == {}
    step = sim.send("poke", to="t")
    assert [(r.delivery.event, r.reason) for r in step.records] == [
        ("poke", None),
        ("ping", NO_RECEIVER),
    ]


def test_done_output_of_a_child_carries_its_final_context(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, TALKER), load_text(tmp_path, ECHO)])
    sim.start("talker", "t")
    sim.send("ping", {"n": 1}, to="t/echo/0")
    step = sim.send("stop", to="t/echo/0")
    done = step.records[-1]
    assert (done.delivery.event, dict(done.delivery.payload)) == ("done.invoke.echo", {"seen": 1})
    assert done.result is not None and done.result.status is Status.APPLIED


AUDITED = """\
statechart: audited
context: {answers: {type: integer, default: 0}, last: {type: string, default: ""}}
events:
  go: {target: string}
  answer: {status: string, reason: {type: string, nullable: true}}
initial: idle
states:
  idle:
    on:
      go: {do: [{send: {to: {chart: audited, instance: event.target}, event: go,
                        payload: {target: "'nobody'"}, reply: answer}}]}
      answer: {do: [{assign: {answers: ctx.answers + 1, last: event.status}}]}
"""


def test_a_message_to_another_instance_is_outbound_until_delivered(tmp_path: Path) -> None:
    sim = FamilySimulator([load_text(tmp_path, AUDITED)])
    sim.start("audited", "a")
    sim.start("audited", "b")
    step = sim.send("go", {"target": "b"}, to="a")
    assert trail(step) == [("event", "a", "go")]  # not applied in the sender's family step
    (out,) = sim.outbound
    assert (out.sender, out.sender_version, out.index, out.event_id) == ("a", 1, 1, "a@1#1")
    assert (out.message.to, out.message.chart, out.message.reply) == ("b", "audited", "answer")
    steps = sim.deliver_outbound()
    assert [trail(s) for s in steps] == [[("event", "b", "go")], [("event", "a", "answer")]]
    assert dict(sim.member("a").state.context) == {"answers": 1, "last": "APPLIED"}
    # b's own message to "nobody" stays outbound: no such instance here
    assert [o.message.to for o in sim.outbound] == ["nobody"]


def test_a_chart_without_invocations_produces_no_family_outputs() -> None:
    chart = statekit.load(Path(__file__).resolve().parents[2] / "machines" / "task.yaml")
    result = chart.initialize()
    assert (result.invocations_started, result.invocations_cancelled, result.messages) == (
        (),
        (),
        (),
    )


def test_an_external_event_to_an_unknown_member_is_refused() -> None:
    sim = started_order()
    with pytest.raises(statekit.testing.FamilySimulatorError, match="no instance 'o-9'"):
        sim.send("cancel", to="o-9")


def test_a_driver_that_runs_the_first_step_itself_gets_the_same_family_step() -> None:
    # as the runner drives it: its own step of the member, then `stepped`, then the queue
    sim = started_order()
    members = dict(sim.members)
    payment = members[PAYMENT]
    charts = {c.name: c for c in order_family()}
    router = FamilyRouter(lambda name, _version: charts.get(name), now_ms=0)
    result = charts["payment"].send(payment.state, "authorised", {"ref": "p-9"}, now_ms=0)
    members[PAYMENT] = router.stepped(payment, result)
    assert (members[PAYMENT].version, members[PAYMENT].status) == (1, MemberStatus.DONE)
    events = []
    while (delivery := router.next()) is not None:
        record = router.deliver(delivery, members.get(delivery.target))
        assert record.after is not None
        members[record.after.instance_id] = record.after
        events.append((delivery.event, dict(delivery.payload)))
    assert events == [("done.invoke.payment", {"ref": "p-9", "paid": True})]
    assert members["o-1"].state.context["payment_ref"] == "p-9"
    assert router.outbound == [] and not router.exceeded


def test_a_root_whose_context_is_refused_is_not_created() -> None:
    sim = FamilySimulator(order_family())
    with pytest.raises(statekit.StartError, match=r"INVALID_INPUT: .*'nope'"):
        sim.start("order", "o-1", {"nope": 1})
    assert dict(sim.members) == {}


def test_the_kinds_of_deliveries_are_named() -> None:
    assert {k.value for k in DeliveryKind} == {"event", "timer", "start", "cancel"}

"""The three domain charts (a subscription, a support ticket, a shipment) as a team
runs them: each compiles, lints without errors, has its invariants proven by
`statekit explain`, and takes a realistic stream of events through the durable
runner on SQLite: re-sent webhooks answered ALREADY_APPLIED by event ID and by
business key, scans out of order, a customer racing the carrier, and timers
delivered by `fire_due` as an injected clock passes their due times."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_process import statekit as statekit_cli

import statekit
from statekit import Outcome, OutcomeStatus

CHARTS = Path(__file__).resolve().parent / "domain"
DOMAIN_CHARTS = ["subscription.yaml", "support_ticket.yaml", "shipment.yaml"]

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOUR = 3_600_000
DAY = 24 * HOUR

APPLIED = OutcomeStatus.APPLIED
ALREADY = OutcomeStatus.ALREADY_APPLIED
REJECTED = OutcomeStatus.REJECTED
CONFLICT = OutcomeStatus.CONFLICT


class Clock:
    """Epoch milliseconds, moved by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


class Instance:
    """One chart instance in a durable runner over a fresh SQLite file, with its clock."""

    def __init__(self, runner: statekit.Runner, clock: Clock, instance_id: str) -> None:
        self.runner, self.clock, self.id = runner, clock, instance_id
        runner.create(instance_id)

    def send(self, event_id: str, event: str, payload: dict[str, Any] | None = None) -> Outcome:
        return self.runner.apply(self.id, event_id, event, payload or {})

    def advance(self, ms: int) -> list[Outcome]:
        """Move the clock and deliver what came due."""
        self.clock.now += ms
        return self.runner.fire_due()

    @property
    def configuration(self) -> set[str]:
        """The active leaf states."""
        active = self.runner.load(self.id).state.configuration
        return {s for s in active if not any(o.startswith(s + ".") for o in active)}

    @property
    def context(self) -> dict[str, Any]:
        return dict(self.runner.load(self.id).state.context)

    @property
    def timers(self) -> set[str]:
        return {t.id for t in self.runner.load(self.id).state.timers}

    def sla(self) -> statekit.ArmedTimer:
        """The support ticket's SLA timer (armed)."""
        found = self.runner.load(self.id).state.timer("after(sla)@sla.clock")
        assert found is not None
        return found


@pytest.fixture
def open_instance(tmp_path: Path) -> Iterator[Any]:
    """open_instance(chart file, instance ID) → an `Instance`; the stores close at the end."""
    stores: list[Any] = []

    def make(chart: str, instance_id: str) -> Instance:
        store = statekit.open_store(f"sqlite:///{tmp_path / (instance_id + '.db')}")
        stores.append(store)
        clock = Clock()
        runner = statekit.Runner(statekit.load(CHARTS / chart), store, clock=clock)
        return Instance(runner, clock, instance_id)

    yield make
    for store in stores:
        store.close()


def types(outcome: Outcome) -> list[str]:
    return [message.type for message in outcome.emitted]


# --- every chart: compiles, lints clean of errors, invariants proven ---------------


MAX_RACE_ENTRIES = 8
"""`races:` entries (decisions and ordering facts) a chart of this size may need to lint
clean: the analysis asks only for races that diverge or answer differently, and a
decision may cover a set of events, a wildcard or an unordered producer."""


@pytest.mark.parametrize("chart", DOMAIN_CHARTS)
def test_the_chart_lints_clean_with_a_few_race_decisions(chart: str, tmp_path: Path) -> None:
    text = (CHARTS / chart).read_text()
    entries = statekit.load(CHARTS / chart).ir.races
    assert 0 < len(entries) <= MAX_RACE_ENTRIES, [e.name for e in entries]
    done = statekit_cli("lint", str(CHARTS / chart), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["diagnostics"] == []
    races = statekit_cli("races", str(CHARTS / chart), "--format", "json")
    assert races.returncode == 0, races.stdout + races.stderr
    found = json.loads(races.stdout)
    assert found and all(race["decided"] for race in found)
    # without its decisions the chart has real races to decide, each of them reported
    start = text.index("\nraces:\n")
    undecided = tmp_path / chart
    undecided.write_text(text[:start] + text[text.index("\n\n", start) :])
    bare = statekit_cli("lint", str(undecided), "--format", "json")
    slugs = {d["slug"] for d in json.loads(bare.stdout)["diagnostics"]}
    assert "undecided-race" in slugs, bare.stdout


@pytest.mark.parametrize("chart", DOMAIN_CHARTS)
def test_explain_proves_every_invariant(chart: str) -> None:
    done = statekit_cli("explain", str(CHARTS / chart), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    invariants = json.loads(done.stdout)["invariants"]
    assert invariants, "each chart declares invariants"
    assert {i["name"]: i["status"] for i in invariants} == {i["name"]: "proven" for i in invariants}


# --- subscription: trial, dunning, grace, cancel at period end -----------------------


def test_a_subscription_through_trial_dunning_recovery_and_cancel_at_period_end(
    open_instance: Any,
) -> None:
    sub = open_instance("subscription.yaml", "sub-1")
    assert sub.configuration == {"billing.trialing", "entitlement.live.full", "plan.current.basic"}
    assert sub.timers == {"after(trial)@billing.trialing"}

    upgrade = sub.send("app-1", "PLAN_CHANGED", {"change_id": "chg-1", "plan": "pro"})
    assert upgrade.status is APPLIED
    # the app retries the request (same event ID), then re-sends it under a new one
    assert (
        sub.send("app-1", "PLAN_CHANGED", {"change_id": "chg-1", "plan": "pro"}).status is ALREADY
    )
    again = sub.send("app-2", "PLAN_CHANGED", {"change_id": "chg-1", "plan": "pro"})
    assert (again.status, again.duplicate, again.first_event_id) == (ALREADY, True, "app-1")

    # nothing is due before the trial's 14 days are over
    assert sub.advance(14 * DAY - 1) == []
    (trial_end,) = sub.advance(1)
    assert trial_end.status is APPLIED and types(trial_end) == ["InvoiceRequested"]
    # the invoice charges the plan's price (tables.price_cents): upgraded to pro above
    assert [m.payload for m in trial_end.emitted] == [
        {"amount_cents": 4900, "invoice_key": "inv-1"}
    ]
    assert sub.configuration == {"billing.invoiced", "entitlement.live.full", "plan.current.pro"}

    # the provider's first charge fails: dunning starts, access enters its grace period
    failed = {"invoice_id": "in_1", "attempt": 1, "failure_code": "card_declined"}
    assert sub.send("wh-1", "PAYMENT_FAILED", failed).status is APPLIED
    assert sub.configuration == {
        "billing.past_due.waiting_retry",
        "entitlement.live.grace",
        "plan.current.pro",
    }
    # the provider re-delivers the webhook under a new delivery ID: one fact, applied once
    resent = sub.send("wh-1b", "PAYMENT_FAILED", failed)
    assert (resent.status, resent.duplicate, resent.first_event_id) == (ALREADY, True, "wh-1")
    assert sub.context["failed_attempts"] == 1

    (retry,) = sub.advance(3 * DAY)
    assert retry.status is APPLIED and types(retry) == ["ChargeRetried"]
    second = {"invoice_id": "in_1", "attempt": 2, "failure_code": "card_declined"}
    assert sub.send("wh-2", "PAYMENT_FAILED", second).status is APPLIED
    assert sub.context["failed_attempts"] == 2
    assert "billing.past_due.waiting_retry" in sub.configuration
    (retry,) = sub.advance(3 * DAY)
    assert "billing.past_due.retrying" in sub.configuration

    # seven days after the first failure the grace period ends
    (suspension,) = sub.advance(1 * DAY)
    assert types(suspension) == ["AccessSuspended"]
    assert "entitlement.live.suspended" in sub.configuration

    paid = sub.send("wh-3", "PAYMENT_SUCCEEDED", {"invoice_id": "in_1", "amount_cents": 4900})
    assert paid.status is APPLIED and types(paid) == ["AccessRestored"]
    assert sub.configuration == {"billing.active", "entitlement.live.full", "plan.current.pro"}
    assert (sub.context["failed_attempts"], sub.context["last_invoice_id"]) == (0, "in_1")
    # a success for the same invoice, late, under another delivery ID: the same fact
    late = sub.send("wh-3b", "PAYMENT_SUCCEEDED", {"invoice_id": "in_1", "amount_cents": 4900})
    assert (late.status, late.duplicate) == (ALREADY, True)

    # cancel at the end of the period: a flag in the context, read by the renewal's guard
    cancel = {"request_id": "req-1", "at_period_end": True}
    assert sub.send("app-3", "CANCEL_REQUESTED", cancel).status is APPLIED
    assert sub.context["cancel_at_period_end"] is True
    assert "billing.active" in sub.configuration

    (period_end,) = sub.advance(30 * DAY)
    assert period_end.status is APPLIED
    assert [(m.type, dict(m.payload)) for m in period_end.emitted] == [
        ("SubscriptionEnded", {"reason": "canceled at period end"})
    ]
    assert sub.configuration == {"billing.canceled", "entitlement.revoked", "plan.closed"}
    assert sub.timers == set()
    after_end = sub.send("app-4", "PLAN_CHANGED", {"change_id": "chg-2", "plan": "basic"})
    assert after_end.status is REJECTED
    assert sub.runner.verify(sub.id).ok


def test_a_withdrawn_cancellation_renews_and_exhausted_retries_cancel_as_unpaid(
    open_instance: Any,
) -> None:
    sub = open_instance("subscription.yaml", "sub-2")
    sub.advance(14 * DAY)
    sub.send("wh-1", "PAYMENT_SUCCEEDED", {"invoice_id": "in_1", "amount_cents": 4900})
    sub.send("app-1", "CANCEL_REQUESTED", {"request_id": "req-1", "at_period_end": True})
    withdrawn = sub.send("app-2", "CANCELLATION_WITHDRAWN", {"request_id": "req-2"})
    assert withdrawn.status is APPLIED and sub.context["cancel_at_period_end"] is False
    nothing_to_withdraw = sub.send("app-3", "CANCELLATION_WITHDRAWN", {"request_id": "req-3"})
    assert (nothing_to_withdraw.status, nothing_to_withdraw.reason) == (
        REJECTED,
        "NO_CANCELLATION_SCHEDULED",
    )

    (renewal,) = sub.advance(30 * DAY)
    assert types(renewal) == ["InvoiceRequested"]
    assert [m.payload for m in renewal.emitted] == [
        {"amount_cents": 1900, "invoice_key": "inv-2"}  # basic, the second period
    ]
    assert "billing.invoiced" in sub.configuration

    # three charges fail (max_attempts 3): the dunning loop gives up
    for attempt in (1, 2, 3):
        payload = {"invoice_id": "in_2", "attempt": attempt, "failure_code": "expired_card"}
        failed = sub.send(f"wh-f{attempt}", "PAYMENT_FAILED", payload)
        assert failed.status is APPLIED, failed
        if attempt < 3:
            (retry,) = sub.advance(3 * DAY)
            assert types(retry) == ["ChargeRetried"]
    assert [m.payload["reason"] for m in failed.emitted] == ["unpaid"]
    assert sub.configuration == {"billing.canceled", "entitlement.revoked", "plan.closed"}
    assert sub.advance(30 * DAY) == []


def test_an_updated_card_retries_at_once_and_an_immediate_cancel_ends_the_trial(
    open_instance: Any,
) -> None:
    sub = open_instance("subscription.yaml", "sub-3")
    sub.advance(14 * DAY)
    failed = {"invoice_id": "in_1", "attempt": 1, "failure_code": "card_declined"}
    sub.send("wh-1", "PAYMENT_FAILED", failed)
    card = sub.send("app-1", "PAYMENT_METHOD_UPDATED", {"method_id": "pm_2"})
    assert card.status is APPLIED and types(card) == ["ChargeRetried"]
    assert "billing.past_due.retrying" in sub.configuration
    # the retry timer went with the state it belonged to
    assert "after(retry)@billing.past_due.waiting_retry" not in sub.timers

    trial = open_instance("subscription.yaml", "sub-4")
    cancel = {"request_id": "req-1", "at_period_end": False}
    assert trial.send("app-1", "CANCEL_REQUESTED", cancel).status is APPLIED
    assert trial.configuration == {"billing.canceled", "entitlement.revoked", "plan.closed"}
    assert trial.advance(14 * DAY) == []


# --- support ticket: an SLA that pauses while waiting on the customer ----------------


def opened(priority: str) -> dict[str, Any]:
    return {"ticket_id": "T-100", "priority": priority}


def test_the_sla_pauses_while_waiting_on_the_customer_and_escalates_when_breached(
    open_instance: Any,
) -> None:
    ticket = open_instance("support_ticket.yaml", "ticket-1")
    # a reply that overtook the ticket's creation
    early = ticket.send("mail-0", "CUSTOMER_REPLIED", {"message_id": "m-0"})
    assert (early.status, early.reason) == (REJECTED, "TICKET_NOT_OPENED")

    assert ticket.send("sys-1", "TICKET_OPENED", opened("urgent")).status is APPLIED
    assert ticket.context["priority"] == "urgent"  # tables.sla: four hours
    assert ticket.timers == {"after(sla)@sla.clock"}
    assert ticket.sla().due_ms == T0 + 4 * HOUR
    # the intake re-sends the ticket under a new message ID: one ticket
    resent = ticket.send("sys-1b", "TICKET_OPENED", opened("urgent"))
    assert (resent.status, resent.duplicate) == (ALREADY, True)

    ticket.send("agent-1", "AGENT_ASSIGNED", {"agent_id": "ana"})
    ticket.clock.now = T0 + 1 * HOUR
    asked = ticket.send("agent-2", "INFO_REQUESTED", {"message_id": "m-1"})
    assert asked.status is APPLIED
    assert ticket.configuration == {
        "conversation.waiting_on_customer",
        "sla.clock.paused",
        "escalation.normal",
    }
    assert ticket.timers == {
        "after(sla)@sla.clock",
        "after(no_reply)@conversation.waiting_on_customer",
    }
    # paused with three hours left, and no due time
    assert (ticket.sla().paused_ms, ticket.sla().due_ms) == (3 * HOUR, None)

    # the SLA's original due time passes while its timer is paused: nothing fires
    assert ticket.advance(5 * HOUR) == []
    reply = {"message_id": "m-2"}
    assert ticket.send("mail-2", "CUSTOMER_REPLIED", reply).status is APPLIED
    # five hours waiting on the customer move the deadline by five hours
    assert (ticket.sla().paused_ms, ticket.sla().due_ms) == (None, T0 + 9 * HOUR)
    assert ticket.configuration == {
        "conversation.in_progress",
        "sla.clock.running",
        "escalation.normal",
    }
    again = ticket.send("mail-2b", "CUSTOMER_REPLIED", reply)
    assert (again.status, again.duplicate) == (ALREADY, True)

    assert ticket.advance(3 * HOUR - 1) == []
    (breach,) = ticket.advance(1)
    assert breach.status is APPLIED
    assert [(m.type, dict(m.payload)) for m in breach.emitted] == [
        ("SlaBreached", {}),
        ("EscalationRaised", {"reason": "sla breached"}),
    ]
    assert ticket.configuration == {
        "conversation.in_progress",
        "sla.breached",
        "escalation.escalated",
    }
    manual = ticket.send("agent-3", "ESCALATED", {"reason": "vip"})
    assert manual.status is ALREADY

    ticket.send("agent-4", "RESOLVED", {"message_id": "m-3"})
    done = ticket.send("mail-4", "RESOLUTION_CONFIRMED", {"message_id": "m-4"})
    assert done.status is APPLIED
    assert ticket.configuration == {"conversation.closed", "sla.breached", "escalation.finished"}
    assert ticket.runner.verify(ticket.id).ok


def test_a_resolved_ticket_reopens_on_a_reply_and_closes_itself_after_three_days(
    open_instance: Any,
) -> None:
    ticket = open_instance("support_ticket.yaml", "ticket-2")
    ticket.send("sys-1", "TICKET_OPENED", opened("normal"))
    assert ticket.sla().due_ms == T0 + 24 * HOUR
    ticket.send("agent-1", "AGENT_ASSIGNED", {"agent_id": "ana"})
    resolved = ticket.send("agent-2", "RESOLVED", {"message_id": "m-1"})
    assert types(resolved) == ["ResolutionSent"]
    # resolved within the SLA: met, its timer gone
    assert ticket.configuration == {"conversation.resolved", "sla.met", "escalation.normal"}
    assert ticket.timers == {"after(auto_close)@conversation.resolved"}

    reopened = ticket.send("mail-2", "CUSTOMER_REPLIED", {"message_id": "m-2"})
    assert types(reopened) == ["TicketReopened"]
    assert "conversation.in_progress" in ticket.configuration
    # the auto-close timer went with `resolved`; a second resolution arms a new one
    assert ticket.advance(3 * DAY) == []
    ticket.send("agent-3", "RESOLVED", {"message_id": "m-3"})
    assert ticket.advance(3 * DAY - 1) == []
    (closed,) = ticket.advance(1)
    assert closed.status is APPLIED
    assert ticket.configuration == {"conversation.closed", "sla.met", "escalation.finished"}
    late = ticket.send("agent-4", "AGENT_ASSIGNED", {"agent_id": "bo"})
    assert late.status is REJECTED


def test_an_unanswered_question_closes_the_ticket_after_seven_days(open_instance: Any) -> None:
    ticket = open_instance("support_ticket.yaml", "ticket-3")
    ticket.send("sys-1", "TICKET_OPENED", opened("low"))
    ticket.send("agent-1", "AGENT_ASSIGNED", {"agent_id": "ana"})
    ticket.send("agent-2", "INFO_REQUESTED", {"message_id": "m-1"})
    (no_reply,) = ticket.advance(7 * DAY)
    assert types(no_reply) == ["ClosedForNoReply"]
    assert ticket.configuration == {"conversation.closed", "sla.met", "escalation.finished"}


# --- shipment: duplicated, out-of-order carrier webhooks; cancel racing pick-up -------


def scan(tracking_event_id: str, **more: Any) -> dict[str, Any]:
    """A carrier webhook's payload: the time of the scan is the step's clock (`now`)."""
    return {"tracking_event_id": tracking_event_id, **more}


def delivered(tracking_event_id: str, handed_over_ms: int) -> dict[str, Any]:
    """DELIVERED carries the carrier's own time of the hand-over (not the step's)."""
    return {"tracking_event_id": tracking_event_id, "scanned_at_ms": handed_over_ms}


def test_duplicated_and_out_of_order_carrier_webhooks_apply_each_fact_once(
    open_instance: Any,
) -> None:
    parcel = open_instance("shipment.yaml", "ship-1")
    assert parcel.send("wh-1", "LABEL_CREATED", {"carrier_ref": "1Z999"}).status is APPLIED
    assert parcel.configuration == {"awaiting_pickup"}

    # the hub's scan overtakes the pick-up scan
    parcel.clock.now = T0 + 5 * HOUR
    hub = scan("trk-2", facility="LEJ")
    assert parcel.send("hook-2", "IN_TRANSIT", hub).status is APPLIED
    assert parcel.configuration == {"moving.in_transit"}
    assert parcel.context["picked_up_at"] == T0 + 5 * HOUR  # when the first scan came
    late_pickup = parcel.send("hook-1", "PICKED_UP", scan("trk-1"))
    assert late_pickup.status is ALREADY and not late_pickup.duplicate

    # the carrier re-delivers the hub scan under a new webhook ID: the same fact
    redelivered = parcel.send("hook-2-retry", "IN_TRANSIT", hub)
    assert (redelivered.status, redelivered.duplicate, redelivered.first_event_id) == (
        ALREADY,
        True,
        "hook-2",
    )
    # and once with the same tracking event ID but another facility: not the same fact
    garbled = parcel.send("hook-2-bad", "IN_TRANSIT", scan("trk-2", facility="MUC"))
    assert (garbled.status, garbled.reason, garbled.first_event_id) == (
        CONFLICT,
        "BUSINESS_KEY_CONFLICT",
        "hook-2",
    )
    # the same webhook delivery retried by the carrier: answered from its record
    assert parcel.send("hook-2", "IN_TRANSIT", hub).status is ALREADY

    parcel.clock.now = T0 + 9 * HOUR
    assert parcel.send("hook-3", "IN_TRANSIT", scan("trk-3", facility="FRA")).status is APPLIED
    assert parcel.context["last_scan_at"] == T0 + 9 * HOUR
    # delivered overtakes out-for-delivery; the webhook comes two hours after the hand-over
    parcel.clock.now = T0 + 32 * HOUR
    assert parcel.send("hook-5", "DELIVERED", delivered("trk-5", T0 + 30 * HOUR)).status is APPLIED
    assert parcel.configuration == {"delivered"}
    assert parcel.context["delivered_scan_ms"] == T0 + 30 * HOUR
    assert parcel.timers == set()
    late = parcel.send("hook-4", "OUT_FOR_DELIVERY", scan("trk-4"))
    assert (late.status, late.duplicate) == (ALREADY, False)
    assert parcel.configuration == {"delivered"}
    refused = parcel.send("hook-6", "DELIVERY_FAILED", scan("trk-6", reason="x"))
    assert (refused.status, refused.reason) == (REJECTED, "TERMINAL_STATE")
    history = parcel.runner.history(parcel.id)
    assert [e.event_id for e in history] == [
        "wh-1",
        "hook-2",
        "hook-1",
        "hook-3",
        "hook-5",
        "hook-4",
    ]
    assert parcel.runner.verify(parcel.id).ok


@pytest.mark.parametrize(
    ("first", "second", "configuration", "emitted", "answer"),
    [
        pytest.param(
            "customer",
            "carrier",
            {"returning"},
            ["LabelVoidRequested", "ReturnToSenderRequested"],
            (APPLIED, None),
            id="cancel-commits-first",
        ),
        pytest.param(
            "carrier",
            "customer",
            {"moving.in_transit"},
            [],
            (REJECTED, "ALREADY_SHIPPED"),
            id="pick-up-commits-first",
        ),
    ],
)
def test_a_customer_cancel_racing_the_carriers_pick_up(
    open_instance: Any,
    first: str,
    second: str,
    configuration: set[str],
    emitted: list[str],
    answer: tuple[OutcomeStatus, str | None],
) -> None:
    parcel = open_instance("shipment.yaml", f"ship-{first}")
    parcel.send("wh-1", "LABEL_CREATED", {"carrier_ref": "1Z999"})
    commands = {
        "customer": ("app-1", "CANCEL_REQUESTED", {"request_id": "req-1"}),
        "carrier": ("hook-1", "PICKED_UP", scan("trk-1")),
    }
    messages: list[str] = []
    winner = parcel.send(*commands[first])
    assert winner.status is APPLIED
    messages += types(winner)
    loser = parcel.send(*commands[second])
    assert (loser.status, loser.reason) == answer
    messages += types(loser)
    assert parcel.configuration == configuration
    assert messages == emitted


def test_the_clock_flags_a_late_pick_up_and_a_parcel_lost_in_transit(open_instance: Any) -> None:
    parcel = open_instance("shipment.yaml", "ship-2")
    parcel.send("wh-1", "LABEL_CREATED", {"carrier_ref": "1Z999"})
    assert parcel.timers == {"after(pickup_overdue)@awaiting_pickup"}
    (overdue,) = parcel.advance(2 * DAY)
    assert overdue.status is APPLIED
    assert [(m.type, dict(m.payload)) for m in overdue.emitted] == [
        ("PickupOverdue", {"carrier_ref": "1Z999", "waiting_ms": 2 * DAY})
    ]
    # a targetless timer: the state stays, its timer is consumed
    assert parcel.configuration == {"awaiting_pickup"} and parcel.timers == set()

    parcel.send("hook-1", "PICKED_UP", scan("trk-1"))
    parcel.send("hook-2", "OUT_FOR_DELIVERY", scan("trk-2"))
    failed = parcel.send("hook-3", "DELIVERY_FAILED", scan("trk-3", reason="away"))
    assert failed.status is APPLIED and parcel.configuration == {"moving.in_transit"}
    # moving between in_transit and out_for_delivery keeps the 14-day timer of `moving`
    assert parcel.timers == {"after(lost)@moving"}
    assert parcel.advance(14 * DAY - 1) == []
    (lost,) = parcel.advance(1)
    assert [(m.type, dict(m.payload)) for m in lost.emitted] == [
        (
            "LostParcelClaim",
            {
                "carrier_ref": "1Z999",
                "claim_ref": f"1Z999-lost-{T0 + 16 * DAY}",
                "last_scan_at": T0 + 2 * DAY,
            },
        )
    ]
    assert parcel.configuration == {"lost"}
    assert parcel.runner.verify(parcel.id).ok


@pytest.mark.parametrize(
    ("days_out", "configuration"), [(9, {"moving.in_transit"}), (10, {"returning"})]
)
def test_a_failed_delivery_ten_days_after_pick_up_returns_the_parcel(
    open_instance: Any, days_out: int, configuration: set[str]
) -> None:
    parcel = open_instance("shipment.yaml", f"ship-late-{days_out}")
    parcel.send("wh-1", "LABEL_CREATED", {"carrier_ref": "1Z999"})
    parcel.send("hook-1", "PICKED_UP", scan("trk-1"))
    parcel.clock.now += days_out * DAY
    parcel.send("hook-2", "OUT_FOR_DELIVERY", scan("trk-2"))
    failed = parcel.send("hook-3", "DELIVERY_FAILED", scan("trk-3", reason="away"))
    assert failed.status is APPLIED and parcel.configuration == configuration
    assert parcel.context["delivery_attempts"] == 1
    assert parcel.runner.verify(parcel.id).ok

"""Races with a child: an invocation is a producer of its own (`invoke.<id>`), whose
`done.invoke.<id>` and sends to the parent race with the parent's other producers."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import statekit
from order_payment_family import ORDER, PAYMENT, write_family

from statekit.analysis.races import RACE, find_races
from statekit.compiler.chart_set import ChartSet
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source

PRODUCERS = "producers:\n  customer: [CANCEL]\ninitial: paying\n"
ORDER_WITH_PRODUCERS = ORDER.replace("initial: paying\n", PRODUCERS)
DECIDED = ORDER_WITH_PRODUCERS.replace(
    "initial: paying\n",
    "races:\n  cancel_vs_payment:\n    events: [CANCEL, done.invoke.payment]\n"
    "    decision: Whichever commits first wins; a late one is rejected.\n"
    "initial: paying\n",
)
RETRYING_PAYMENT = PAYMENT.replace(
    "      DECLINED: declined\n",
    "      DECLINED: declined\n"
    "      RETRIED: {do: [{send: {event: PAYMENT_RETRIED, to: parent}}]}\n",
).replace("  DECLINED: {}\n", "  DECLINED: {}\n  RETRIED: {}\n")
ORDER_HEARING_RETRIES = ORDER_WITH_PRODUCERS.replace(
    "  CANCEL: {}\n", "  CANCEL: {}\n  PAYMENT_RETRIED: {}\n"
).replace("      CANCEL: cancelled\n", "      CANCEL: cancelled\n      PAYMENT_RETRIED: paying\n")


def _chart(text: str) -> CompiledChart:
    result = compile_source(text, "chart.yaml")
    assert result.chart is not None, result.diagnostics
    return result.chart


def test_a_childs_done_races_with_the_parents_own_events_in_both_orders() -> None:
    report = find_races(_chart(ORDER_WITH_PRODUCERS))
    (race,) = [r for r in report.races if set(r.events) == {"CANCEL", "done.invoke.payment"}]
    assert race.race_class == RACE and not race.decided
    producers = dict(zip(race.events, race.producers, strict=True))
    assert producers == {"CANCEL": "customer", "done.invoke.payment": "invoke.payment"}
    ends = {o.configuration for o in race.orders}
    assert ends == {("cancelled",), ("paid",)}, race.orders


def test_a_races_entry_decides_it() -> None:
    report = find_races(_chart(DECIDED))
    (race,) = [r for r in report.races if set(r.events) == {"CANCEL", "done.invoke.payment"}]
    assert race.decided and race.decision is not None
    assert race.decision.name == "cancel_vs_payment"
    assert report.unmatched == ()


def test_done_and_error_of_one_child_never_race() -> None:
    report = find_races(_chart(ORDER_WITH_PRODUCERS))
    pairs = {frozenset(r.events) for r in (*report.races, *report.convergent)}
    assert frozenset({"done.invoke.payment", "error.invoke.payment"}) not in pairs


def test_a_childs_sends_are_its_producers_when_the_child_is_in_the_set() -> None:
    order, payment = _chart(ORDER_HEARING_RETRIES), _chart(RETRYING_PAYMENT)
    alone = find_races(order)
    together = find_races(order, chart_set=ChartSet((order, payment)))

    def examined(report: object) -> set[frozenset[str]]:
        assert hasattr(report, "races") and hasattr(report, "convergent")
        return {frozenset(r.events) for r in (*report.races, *report.convergent)}

    retried_then_done = frozenset({"PAYMENT_RETRIED", "done.invoke.payment"})
    assert retried_then_done in examined(alone)  # no producer known: it may race
    assert retried_then_done not in examined(together)  # the child sends them in order
    (race,) = [r for r in together.races if set(r.events) == {"CANCEL", "PAYMENT_RETRIED"}] or [
        r for r in together.convergent if set(r.events) == {"CANCEL", "PAYMENT_RETRIED"}
    ]
    assert dict(zip(race.events, race.producers, strict=True))["PAYMENT_RETRIED"] == (
        "invoke.payment"
    )


def test_statekit_races_lists_the_childs_pairs(tmp_path: Path) -> None:
    folder = write_family(tmp_path, order=ORDER_WITH_PRODUCERS)
    done = statekit("races", str(folder))
    assert done.returncode == 1, done.stderr  # undecided
    assert "CANCEL (customer) and done.invoke.payment (invoke.payment)" in done.stdout
    assert "UNDECIDED" in done.stdout
    assert "(done.invoke.payment does not arrive then: leaving 'paying' cancelled its child)" in (
        done.stdout
    )
    decided = statekit("races", str(write_family(tmp_path / "decided", order=DECIDED)))
    assert "decided by 'cancel_vs_payment'" in decided.stdout, decided.stdout


def test_the_example_orders_cancel_races_with_each_childs_done() -> None:
    done = statekit("races", "examples/order_family", "--format", "json")
    assert done.returncode == 1  # the example decides none of them
    pairs = {
        (tuple(r["events"]), tuple(r["producers"]))
        for r in json.loads(done.stdout)
        if r["chart"] == "order"
    }
    assert (("cancel", "done.invoke.payment"), (None, "invoke.payment")) in pairs
    assert (("cancel", "done.invoke.shipment"), (None, "invoke.shipment")) in pairs


ORDER_STARTED_LATER = (
    ORDER_HEARING_RETRIES.replace("initial: paying\n", "initial: idle\n")
    .replace("  CANCEL: {}\n", "  CANCEL: {}\n  START: {}\n")
    .replace(
        "states:\n",
        "states:\n  idle:\n    on: {START: paying}\n"
        "    reject: {CANCEL: NOT_STARTED, PAYMENT_RETRIED: NO_PAYMENT}\n",
        1,
    )
)
"""An order that invokes its payment only once started: in `idle` no child exists."""


def test_a_childs_sends_are_paired_only_where_the_invocation_is_active() -> None:
    order, payment = _chart(ORDER_STARTED_LATER), _chart(RETRYING_PAYMENT)
    together = find_races(order, chart_set=ChartSet((order, payment)))
    examined = [*together.races, *together.convergent]
    retried = [r for r in examined if "PAYMENT_RETRIED" in r.events]
    assert retried, examined
    where = {r.configuration for r in retried} | {
        o.configuration for r in retried for o in r.elsewhere
    }
    assert where == {("paying",)}, where  # never {idle}: no payment runs there
    alone = find_races(order)  # the child unknown: an event of no producer, anywhere
    anywhere = [r for r in (*alone.races, *alone.convergent) if "PAYMENT_RETRIED" in r.events]
    shown = {r.configuration for r in anywhere}
    assert ("idle",) in shown | {o.configuration for r in anywhere for o in r.elsewhere}

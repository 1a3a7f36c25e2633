"""Grouped race decisions: unordered producers, ordering facts (`precedes`), sides that
are a list or `"*"`, which entry decides when several cover a race, and when each form
is stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from analysis_charts import chart_of, findings
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from statekit.analysis.races import RaceReport, find_races

SHIPMENT = """
statechart: shipment
version: 1
events: {ORDER_PLACED: {}, PICKED_UP: {}, IN_TRANSIT: {}, DELIVERED: {}, CUSTOMER_CANCEL: {}}
producers:
  shop: [ORDER_PLACED]
  carrier: {carrier}
  customer: [CUSTOMER_CANCEL]
{races}
initial: new
states:
  new:
    on: {ORDER_PLACED: waiting}
    reject: {"*": NOT_PLACED}
  waiting:
    on: {PICKED_UP: picked, IN_TRANSIT: transit, DELIVERED: delivered, CUSTOMER_CANCEL: cancelled}
    already: [ORDER_PLACED]
  picked:
    on: {IN_TRANSIT: transit, DELIVERED: delivered, CUSTOMER_CANCEL: cancelled}
    already: [ORDER_PLACED, PICKED_UP]
  transit:
    on: {DELIVERED: delivered}
    after: {7d: lost}
    already: [ORDER_PLACED, PICKED_UP, IN_TRANSIT]
    reject: {CUSTOMER_CANCEL: TOO_LATE}
  delivered:
    final: true
    already: [ORDER_PLACED, PICKED_UP, IN_TRANSIT, DELIVERED]
    reject: {CUSTOMER_CANCEL: DELIVERED}
  lost:
    final: true
    reject: {"*": LOST}
  cancelled:
    final: true
    already: [ORDER_PLACED, CUSTOMER_CANCEL]
    reject: {"*": CANCELLED}
"""
ORDERED = "[PICKED_UP, IN_TRANSIT, DELIVERED]"
UNORDERED = (
    "{events: [PICKED_UP, IN_TRANSIT, DELIVERED], unordered: true, "
    "decision: Each webhook is made idempotent by already.}"
)
CARRIER = frozenset({"PICKED_UP", "IN_TRANSIT", "DELIVERED"})
TIMER = "after(7d)@transit"


def shipment(races: str = "", carrier: str = UNORDERED) -> str:
    return SHIPMENT.replace("{carrier}", carrier).replace("{races}", races)


def report(races: str = "", carrier: str = UNORDERED) -> RaceReport:
    return find_races(chart_of(shipment(races, carrier)))


def deciders(found: RaceReport) -> dict[tuple[str, str], set[str | None]]:
    """Each pair of events → the names of the entries that decide it in the
    configurations where its orders differ."""
    out: dict[tuple[str, str], set[str | None]] = {}
    for race in found.races:
        for place in race.places:
            if place.difference is not None:
                name = place.decision.name if place.decision else None
                out.setdefault(race.events, set()).add(name)
    return out


def test_an_ordered_producer_never_races_with_itself_an_unordered_one_does() -> None:
    ordered = {race.events for race in report(carrier=ORDERED).races}
    assert not any(set(pair) <= CARRIER for pair in ordered)
    unordered = report()
    own = [race for race in unordered.races if set(race.events) <= CARRIER]
    assert {race.events for race in own} == {
        ("PICKED_UP", "IN_TRANSIT"),
        ("PICKED_UP", "DELIVERED"),
        ("IN_TRANSIT", "DELIVERED"),
    }
    for race in own:
        assert race.decision is not None and race.decision.producer == "carrier"
        assert race.decision.name == "producers.carrier"
        assert race.decision.decision == "Each webhook is made idempotent by already."
        assert race.producers == ("carrier", "carrier")
    assert all(not set(r.events) <= CARRIER for r in unordered.undecided)
    assert {race.events for race in unordered.races} - {race.events for race in own} == ordered


def test_a_wildcard_decides_every_race_of_its_event_timers_included() -> None:
    found = report('races: {cancel: {events: ["*", CUSTOMER_CANCEL], decision: x}}')
    cancels = [race for race in found.races if "CUSTOMER_CANCEL" in race.events]
    assert ("CUSTOMER_CANCEL", TIMER) in {race.events for race in cancels}
    assert {race.decision.name for race in cancels if race.decision} == {"cancel"}
    assert all(race.decided for race in cancels)
    assert found.unmatched == ()


def test_a_set_decides_the_races_with_each_of_its_events_only() -> None:
    found = report(
        "races: {cancel: {events: [CUSTOMER_CANCEL, [PICKED_UP, DELIVERED]], decision: x}}"
    )
    decided = deciders(found)
    assert decided[("PICKED_UP", "CUSTOMER_CANCEL")] == {"cancel"}
    assert decided[("DELIVERED", "CUSTOMER_CANCEL")] == {"cancel"}
    assert decided[("IN_TRANSIT", "CUSTOMER_CANCEL")] == {None}
    assert decided[("CUSTOMER_CANCEL", TIMER)] == {None}


SPECIFIC = {
    "a list over a wildcard": (
        ["w: {events: [CUSTOMER_CANCEL, '*']}", "s: {events: [[DELIVERED], CUSTOMER_CANCEL]}"],
        "s",
    ),
    "a named pair over a list": (
        [
            "s: {events: [CUSTOMER_CANCEL, [DELIVERED]]}",
            "n: {events: [DELIVERED, CUSTOMER_CANCEL]}",
        ],
        "n",
    ),
    "a name against a list over two lists": (
        [
            "ll: {events: [[CUSTOMER_CANCEL], [DELIVERED, PICKED_UP]]}",
            "nl: {events: [CUSTOMER_CANCEL, [DELIVERED, PICKED_UP]]}",
        ],
        "nl",
    ),
    "a deeper in: over a named pair": (
        [
            "n: {events: [DELIVERED, CUSTOMER_CANCEL]}",
            "w: {events: ['*', CUSTOMER_CANCEL], in: picked}",
        ],
        "w",
    ),
    "the first declared among equals": (
        [
            "a: {events: [CUSTOMER_CANCEL, [DELIVERED]]}",
            "b: {events: [[DELIVERED], CUSTOMER_CANCEL]}",
        ],
        "a",
    ),
}


@pytest.mark.parametrize("case", sorted(SPECIFIC))
def test_the_most_specific_entry_decides_and_none_is_stale(tmp_path: Path, case: str) -> None:
    entries, winner = SPECIFIC[case]
    body = "races:\n" + "".join(f"  {e[:-1]}, decision: x}}\n" for e in entries)
    found = report(body)
    (race,) = [r for r in found.races if r.events == ("DELIVERED", "CUSTOMER_CANCEL")]
    (place,) = [p for p in race.places if "picked" in p.configuration]
    assert place.decision is not None and place.decision.name == winner
    assert found.unmatched == ()
    assert findings(tmp_path, shipment(body), "stale-race-decision") == []


@pytest.mark.parametrize(
    ("entry", "winner"),
    [
        ("{events: [IN_TRANSIT, '*'], decision: x}", "producers.carrier"),
        ("{events: [[IN_TRANSIT], [DELIVERED]], decision: x}", "r"),
        ("{events: [DELIVERED, IN_TRANSIT], decision: x}", "r"),
    ],
)
def test_an_unordered_producer_decides_as_two_lists_after_races_entries(
    entry: str, winner: str
) -> None:
    found = report(f"races: {{r: {entry}}}")
    assert deciders(found)[("IN_TRANSIT", "DELIVERED")] == {winner}


def test_an_ordering_fact_removes_the_pairs_it_orders() -> None:
    before = {race.events for race in report().races}
    assert {pair for pair in before if "ORDER_PLACED" in pair} == {
        ("ORDER_PLACED", "PICKED_UP"),
        ("ORDER_PLACED", "IN_TRANSIT"),
        ("ORDER_PLACED", "DELIVERED"),
        ("ORDER_PLACED", "CUSTOMER_CANCEL"),
        ("ORDER_PLACED", TIMER),
    }
    every = report('races: {placed_first: {precedes: [ORDER_PLACED, "*"], decision: x}}')
    assert {race.events for race in every.races} == {p for p in before if "ORDER_PLACED" not in p}
    one = report(
        "races: {f: {precedes: [[CUSTOMER_CANCEL, PICKED_UP], ORDER_PLACED], decision: x}}"
    )
    assert {race.events for race in one.races} == before - {
        ("ORDER_PLACED", "PICKED_UP"),
        ("ORDER_PLACED", "CUSTOMER_CANCEL"),
    }
    assert every.unmatched == one.unmatched == ()


STALE = {
    "an ordering fact over one ordered producer": (
        ORDERED,
        "races: {f: {precedes: [PICKED_UP, DELIVERED], decision: x}}",
        "ordering fact 'f' orders no pair of events that could race: every pair of PICKED_UP "
        "before DELIVERED is sent in order by one producer (or is two timers)",
    ),
    "a list over one ordered producer": (
        ORDERED,
        "races: {r: {events: [PICKED_UP, [IN_TRANSIT, DELIVERED]], decision: x}}",
        "race 'r': no pair of PICKED_UP and [IN_TRANSIT, DELIVERED] can race: each is sent in "
        "order by one producer or ordered by an ordering fact",
    ),
    "a pair an ordering fact orders": (
        UNORDERED,
        "races:\n  f: {precedes: [ORDER_PLACED, '*'], decision: x}\n"
        "  r: {events: [CUSTOMER_CANCEL, ORDER_PLACED], decision: x}",
        "race 'r': 'CUSTOMER_CANCEL' and 'ORDER_PLACED' never race: ordering fact 'f' says "
        "which arrives first",
    ),
    "a wildcard where nothing races": (
        UNORDERED,
        "races: {r: {events: [CUSTOMER_CANCEL, '*'], in: lost, decision: x}}",
        "race 'r': 'CUSTOMER_CANCEL' and '*' are not order-sensitive in any reachable "
        "configuration where 'lost' is active: both orders give the same answers",
    ),
    "a list naming an event no longer there": (
        UNORDERED,
        "races: {r: {events: [NOPE, [CUSTOMER_CANCEL]], decision: x}}",
        "race 'r' names the undeclared event 'NOPE'",
    ),
}


@pytest.mark.parametrize("case", sorted(STALE))
def test_stale_grouped_entries(tmp_path: Path, case: str) -> None:
    carrier, races, message = STALE[case]
    (finding,) = findings(tmp_path, shipment(races, carrier), "stale-race-decision")
    assert finding.message == message


def test_an_unordered_producer_is_never_stale(tmp_path: Path) -> None:
    commuting = shipment().replace(
        "    on: {PICKED_UP: picked, IN_TRANSIT: transit, DELIVERED: delivered, ",
        "    on: {",
    )
    assert findings(tmp_path, commuting, "stale-race-decision") == []


EVENTS = ["ORDER_PLACED", "PICKED_UP", "IN_TRANSIT", "DELIVERED", "CUSTOMER_CANCEL", TIMER]


def _side(events: list[str]) -> str:
    return (
        "[" + ", ".join(json.dumps(e) for e in events) + "]"
        if len(events) > 1
        else json.dumps(events[0])
    )


@settings(max_examples=40, deadline=None)
@given(
    first=st.lists(st.sampled_from(EVENTS), min_size=1, max_size=3, unique=True),
    second=st.one_of(
        st.just(["*"]), st.lists(st.sampled_from(EVENTS), min_size=1, max_size=3, unique=True)
    ),
    carrier=st.sampled_from([ORDERED, UNORDERED]),
)
def test_a_grouped_entry_decides_exactly_what_its_named_pairs_decide(
    first: list[str], second: list[str], carrier: str
) -> None:
    """A side that is a list or "*" is shorthand: the entry decides exactly the races that
    one named-pair entry per pair of its events decides, and is stale exactly when each of
    them is."""
    others = EVENTS if second == ["*"] else second
    pairs = [(a, b) for a in first for b in others if a != b]
    assume(pairs)  # one name on both sides is a compile error
    grouped = report(
        f"races: {{g: {{events: [{_side(first)}, {_side(second)}], decision: x}}}}", carrier
    )
    named = report(
        "races:\n"
        + "".join(
            f"  p{i}: {{events: [{json.dumps(a)}, {json.dumps(b)}], decision: x}}\n"
            for i, (a, b) in enumerate(dict.fromkeys(tuple(sorted(p)) for p in pairs))
        ),
        carrier,
    )
    assert [r.decided for r in grouped.races] == [r.decided for r in named.races]
    stale_named = len(named.unmatched) == len(set(tuple(sorted(p)) for p in pairs))
    assert (grouped.unmatched != ()) == stale_named

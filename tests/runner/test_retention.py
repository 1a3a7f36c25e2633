"""Retention (`statekit.runner.retention.prune`) over every store shape, on SQLite and
PostgreSQL: what goes, what stays, and that every guarantee keeps holding after it:
verify clean (from the snapshot on, and saying so), a redelivery of a pruned event
answered as before, business keys still one fact, pending and claimed messages
untouched, the instance going on."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from retention_shapes import SHAPES, Shape, business_keys, inbox_rows, snapshot_every

from statekit.runner.chart_versions import chart_sets
from statekit.runner.outbox import Dispatcher
from statekit.runner.outcome import EVENT_ID_PAYLOAD_CONFLICT, OutcomeStatus
from statekit.runner.retention import PruneReport, RetentionError, RetentionPolicy, parse_age, prune
from statekit.runner.snapshots import rebuild
from statekit.runner.store.base import Store
from statekit.runner.store_checks import verify_store
from statekit.runner.verify import verify

LATER = time.time() + 30 * 86_400.0  # every row is older than a day by then
EVERYTHING = RetentionPolicy(
    delivered_age=86_400.0,
    inbox_age=86_400.0,
    rejections_age=86_400.0,
    events_before_snapshot=True,
    batch=2,
)


def verified(shape: Shape) -> dict[str, tuple[bool, int, tuple[str, ...]]]:
    store = shape.runner.store
    assert verify_store(store, [shape.chart]) == []
    charts = chart_sets(store, [shape.chart])[shape.chart.name]
    found = {}
    for instance_id in store.instance_ids():
        report = verify(store, charts, instance_id)
        found[instance_id] = (
            report.ok,
            report.checked_from,
            report.differences + report.snapshot_problems,
        )
    return found


def rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    with store.read():
        return [tuple(r) for r in store.execute(sql).fetchall()]


def newest_snapshot(store: Store, instance_id: str, version: int) -> int:
    with store.read():
        shots = [s.through_sequence for s in store.snapshots(instance_id)]
    return max((s for s in shots if s <= version), default=0)


NOT_DELIVERED = (
    "SELECT instance_id, message_id, status, attempts, claimed_by, claimed_until, last_error "
    "FROM statekit_outbox WHERE status <> 'delivered' ORDER BY id"
)


@pytest.mark.parametrize("build", SHAPES, ids=lambda b: b.__name__)
def test_prune_keeps_every_guarantee(build: Callable[[str], Shape], store_url: str) -> None:
    shape = build(store_url)
    runner, store = shape.runner, shape.runner.store
    states = {i: runner.load(i) for i in store.instance_ids()}
    expected_from = {i: newest_snapshot(store, i, s.version) for i, s in states.items()}
    kept_messages = rows(store, NOT_DELIVERED)
    delivered = rows(store, "SELECT COUNT(*) FROM statekit_outbox WHERE status = 'delivered'")
    inbox = rows(store, "SELECT COUNT(*) FROM statekit_inbox")
    audits = rows(store, "SELECT COUNT(*) FROM statekit_rejections")

    dry = prune(
        store, RetentionPolicy(**{**_fields(EVERYTHING), "dry_run": True}), [shape.chart], now=LATER
    )
    assert rows(store, NOT_DELIVERED) == kept_messages  # a dry run changes nothing
    report = prune(store, EVERYTHING, [shape.chart], now=LATER)

    assert (dry.outbox_messages, dry.inbox_rows, dry.rejections, dry.events_thinned) == (
        report.outbox_messages,
        report.inbox_rows,
        report.rejections,
        report.events_thinned,
    )
    assert report.outbox_messages == delivered[0][0]
    assert (report.inbox_rows, report.rejections) == (inbox[0][0], audits[0][0])
    assert report.events_thinned == sum(expected_from.values())
    assert report.skipped == ()
    assert rows(store, NOT_DELIVERED) == kept_messages  # pending, claimed, dead untouched
    assert rows(store, "SELECT COUNT(*) FROM statekit_outbox WHERE status = 'delivered'") == [(0,)]
    assert verified(shape) == {i: (True, expected_from[i], ()) for i in states}
    assert {i: runner.load(i) for i in states} == states
    for i, loaded in states.items():
        assert rebuild(store, chart_sets(store, [shape.chart])[shape.chart.name], i).state == (
            loaded.state
        )
        assert [e.sequence for e in runner.history(i)] == list(
            range(expected_from[i] + 1, loaded.version + 1)
        )

    for event in shape.applied:  # a duplicate is not a new fact, pruned or not
        again = runner.apply(event.instance_id, event.event_id, event.type, event.payload)
        assert (again.status, again.sequence) == (OutcomeStatus.ALREADY_APPLIED, event.sequence)
        other = {**event.payload, "by": 1234} if "by" in event.payload else {"x": 1}
        if event.type != "Incr":
            continue
        conflict = runner.apply(event.instance_id, event.event_id, event.type, other)
        assert (conflict.status, conflict.reason) == (
            OutcomeStatus.CONFLICT,
            EVENT_ID_PAYLOAD_CONFLICT,
        )

    second = prune(store, EVERYTHING, [shape.chart], now=LATER)
    assert (second.outbox_messages, second.events_thinned, second.instances_thinned) == (0, 0, ())
    assert all(ok for ok, _, _ in verified(shape).values())


def _fields(policy: RetentionPolicy) -> dict[str, Any]:
    return {name: getattr(policy, name) for name in policy.__slots__}


def test_a_business_key_of_a_thinned_event_is_still_one_fact(store_url: str) -> None:
    shape = business_keys(store_url)
    runner = shape.runner
    prune(runner.store, EVERYTHING, [shape.chart], now=LATER)
    assert verified(shape)["t"][:2] == (True, 4)
    same = runner.apply("t", "p9", "PAY_SUCCESS", {"channel_ref": "r1", "amount": 5})
    assert (same.status, same.duplicate, same.first_event_id) == (
        OutcomeStatus.ALREADY_APPLIED,
        True,
        "p1",
    )
    other = runner.apply("t", "p10", "PAY_SUCCESS", {"channel_ref": "r2", "amount": 8})
    assert other.status is OutcomeStatus.CONFLICT and other.first_event_id == "p2"
    assert runner.apply("t", "p11", "PAY_SUCCESS", {"channel_ref": "r4", "amount": 2}).applied
    assert all(ok for ok, _, _ in verified(shape).values())


def test_the_instance_goes_on_and_is_pruned_again(store_url: str) -> None:
    shape = snapshot_every(3, 7)(store_url)
    runner = shape.runner
    prune(runner.store, EVERYTHING, [shape.chart], now=LATER)
    for n in range(7, 13):
        assert runner.apply("i0", f"e{n}", "Incr", {"by": 1}).applied
    assert verified(shape)["i0"][:2] == (True, 6)
    report = prune(runner.store, EVERYTHING, [shape.chart], now=LATER)
    assert report.instances_thinned == (("i0", 12),)
    assert report.events_thinned == 6
    assert verified(shape)["i0"] == (True, 12, ())


def test_without_opting_in_no_event_is_touched(store_url: str) -> None:
    shape = snapshot_every(2, 6)(store_url)
    store = shape.runner.store
    Dispatcher(store, {"Counted": lambda m: None}).run_until_idle()
    before = rows(store, "SELECT * FROM statekit_events ORDER BY sequence")
    report = prune(store, RetentionPolicy(), [shape.chart], now=LATER)
    assert report.events_thinned == 0 and report.outbox_messages == 6
    assert rows(store, "SELECT * FROM statekit_events ORDER BY sequence") == before
    assert verified(shape)["i0"] == (True, 0, ())


def test_young_rows_stay(store_url: str) -> None:
    shape = snapshot_every(2, 4)(store_url)
    Dispatcher(shape.runner.store, {"Counted": lambda m: None}).run_until_idle()
    report = prune(shape.runner.store, EVERYTHING)  # now: nothing is a day old
    assert (report.outbox_messages, report.inbox_rows, report.rejections) == (0, 0, 0)


def test_a_damaged_instance_is_skipped_and_said(store_url: str) -> None:
    shape = snapshot_every(2, 4)(store_url)
    store = shape.runner.store
    with store.write():
        store.execute('UPDATE statekit_instances SET context = \'{"total": 1, "count": 4}\'')
    report = prune(store, EVERYTHING, [shape.chart], now=LATER)
    [skipped] = report.skipped
    assert skipped.instance_id == "i0" and skipped.damaged and report.damaged
    assert "context.total" in skipped.reason
    assert report.events_thinned == 0
    assert rows(store, "SELECT COUNT(*) FROM statekit_events WHERE payload = ''") == [(0,)]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("7d", 604_800.0), ("12h", 43_200.0), ("30m", 1800.0), ("45s", 45.0), ("2w", 1_209_600.0),
     ("1d12h", 129_600.0), (" 3D ", 259_200.0)],
)  # fmt: skip
def test_ages(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["7", "", "d", "7 days", "-1d", "1.5d", "0s", "7d 2h", "1y"])
def test_ages_out_of_form_are_refused_in_words(text: str) -> None:
    with pytest.raises(RetentionError, match=r"--x: .*(not a duration|no time at all)"):
        parse_age(text, "--x")


@pytest.mark.parametrize(
    "settings", [{"batch": 0}, {"batch": 100_001}, {"delivered_age": 0.0}, {"inbox_age": -1.0}]
)
def test_policies_out_of_range_are_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(RetentionError):
        RetentionPolicy(**settings)


def test_report_data() -> None:
    data = PruneReport(dry_run=True, outbox_messages=3).to_data()
    assert data["dry_run"] and data["outbox_messages"] == 3 and data["skipped"] == []


def test_inbox_rows_of_removed_messages_are_not_reported(store_url: str) -> None:
    shape = inbox_rows(store_url)
    store = shape.runner.store
    report = prune(store, RetentionPolicy(delivered_age=86_400.0), [shape.chart], now=LATER)
    assert report.outbox_messages == 8 and report.inbox_rows == 0
    assert rows(store, "SELECT COUNT(*) FROM statekit_inbox") == [(8,)]
    assert verified(shape) == {"i0": (True, 0, ()), "i1": (True, 0, ())}
    shape.runner.create("other")
    with store.write():  # an inbox row of an instance nothing was pruned of still is
        store.execute(
            "INSERT INTO statekit_inbox (consumer, instance_id, message_id, processed_at) "
            "VALUES ('billing', 'other', 'x/0', 0)"
        )
    assert verify_store(store, [shape.chart]) == [
        "statekit_inbox: consumer 'billing' processed message 'x/0' of instance 'other', "
        "which the outbox does not have"
    ]

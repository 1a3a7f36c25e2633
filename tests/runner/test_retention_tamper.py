"""`verify` of a pruned store still catches tampering, after the snapshot and in what
retention kept before it (the snapshot, the thinned rows, the watermark), on SQLite
and PostgreSQL; and `rebuild` never replays thinned rows."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from retention_shapes import Shape, snapshot_every

from statekit.runner.chart_versions import chart_sets
from statekit.runner.retention import RetentionPolicy, prune
from statekit.runner.snapshots import rebuild
from statekit.runner.store.base import Store
from statekit.runner.verify import VerifyReport, verify

LATER = time.time() + 30 * 86_400.0


def _sql(sql: str, *params: object) -> Callable[[Store], None]:
    def tamper(store: Store) -> None:
        with store.write():
            store.execute(sql, params)

    tamper.__name__ = sql
    return tamper


TAMPERS: dict[str, Callable[[Store], None]] = {
    "a payload after the snapshot": _sql(
        "UPDATE statekit_events SET payload = '{\"by\": 70}' WHERE sequence = 7"
    ),
    "an event after the snapshot thinned by hand": _sql(
        "UPDATE statekit_events SET payload = '', evidence = '' WHERE sequence = 7"
    ),
    "the snapshot's state": _sql(
        "UPDATE statekit_snapshots SET state = replace(state, '21', '22') "
        "WHERE through_sequence = 6"
    ),
    "the snapshot deleted": _sql("DELETE FROM statekit_snapshots WHERE through_sequence = 6"),
    "a thinned row deleted": _sql("DELETE FROM statekit_events WHERE sequence = 3"),
    "a thinned row's hash cut short": _sql(
        "UPDATE statekit_events SET payload_sha256 = ? WHERE sequence = 2", b"12345678"
    ),
    "a thinned row half thinned": _sql(
        "UPDATE statekit_events SET evidence = 'x' WHERE sequence = 2"
    ),
    "the watermark past the snapshot": _sql("UPDATE statekit_retention SET events_through = 7"),
    "the watermark before the thinned rows": _sql(
        "UPDATE statekit_retention SET events_through = 3"
    ),
    "the instance's context": _sql(
        'UPDATE statekit_instances SET context = \'{"total": 1, "count": 7}\''
    ),
    "a message after the snapshot deleted": _sql("DELETE FROM statekit_outbox WHERE sequence = 7"),
}


def pruned(url: str) -> Shape:
    shape = snapshot_every(3, 7)(url)  # snapshots at 3 and 6, one event after
    report = prune(
        shape.runner.store,
        RetentionPolicy(events_before_snapshot=True, batch=2),
        [shape.chart],
        now=LATER,
    )
    assert report.instances_thinned == (("i0", 6),)
    return shape


def checked(shape: Shape) -> VerifyReport:
    store = shape.runner.store
    return verify(store, chart_sets(store, [shape.chart])[shape.chart.name], "i0")


def test_a_pruned_store_verifies_from_its_snapshot(store_url: str) -> None:
    report = checked(pruned(store_url))
    assert (report.ok, report.checked_from, report.events) == (True, 6, 7)
    assert report.to_data()["checked_from"] == 6


@pytest.mark.parametrize("tamper", TAMPERS.values(), ids=TAMPERS.keys())
def test_tampering_with_a_pruned_store_is_found(
    tamper: Callable[[Store], None], store_url: str
) -> None:
    shape = pruned(store_url)
    tamper(shape.runner.store)
    report = checked(shape)
    assert not report.ok, report


@pytest.mark.parametrize(
    "tamper",
    [TAMPERS["the snapshot's state"], TAMPERS["the snapshot deleted"]],
    ids=["tampered", "deleted"],
)
def test_rebuild_never_replays_thinned_rows(
    tamper: Callable[[Store], None], store_url: str
) -> None:
    shape = pruned(store_url)
    store = shape.runner.store
    tamper(store)
    rebuilt = rebuild(store, chart_sets(store, [shape.chart])[shape.chart.name], "i0")
    assert rebuilt.state is None
    assert "events 1..6 were pruned" in rebuilt.problems[0]

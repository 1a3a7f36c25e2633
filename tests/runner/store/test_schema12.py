"""Schema 12: one index per lookup of an event row; a store written before it upgrades.

The event ID's uniqueness is kept as `(event_id, instance_id)` and the business key's as
`(idempotency_key, instance_id, type)`, which also serve the lookups by event ID and by
key alone (the inspector's search), whose own indexes go. Each test runs on both stores;
the upgrade starts from a store turned back into what statekit wrote at schema 11
(`store_legacy.before_schema_12`).
"""

from __future__ import annotations

from typing import Any

import pytest
from runner_charts import COUNTER, FACTS, chart_from
from store_legacy import before_schema_12

from statekit.inspect.list_queries import search
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import LATEST

START = {"attempt": 1, "worker": "w-1"}
ALREADY = OutcomeStatus.ALREADY_APPLIED


def _indexes(store: Store) -> set[str]:
    """The names of the events table's indexes (SQLite's own for its constraints
    included) with their columns."""
    if store.dialect == "sqlite":
        names = [
            str(r[0])
            for r in store.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' "
                "AND tbl_name = 'statekit_events'"
            ).fetchall()
        ]
        return {
            f"{name}({','.join(str(c[2]) for c in store.execute(f'PRAGMA index_info({name})'))})"
            for name in names
        }
    rows = store.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'statekit_events'"
    ).fetchall()
    return {f"{r[0]}({str(r[1]).split('(', 1)[1].split(')')[0].replace(' ', '')})" for r in rows}


def _written(store: Store) -> list[Any]:
    return list(
        store.execute(
            "SELECT instance_id, sequence, event_id, type, payload, payload_sha256, status, "
            "chart_version, evidence, recorded_at, idempotency_key, clock_ms FROM statekit_events "
            "ORDER BY instance_id, sequence"
        ).fetchall()
    )


def _histories(store_url: str) -> tuple[Runner, Runner]:
    """A counter and a facts instance with events, one event ID in both."""
    counter = Runner(chart_from(COUNTER), open_store(store_url))
    counter.create("c")
    for n in range(3):
        assert counter.apply("c", f"e{n}", "Incr", {"by": n + 1}).applied
    facts = Runner(chart_from(FACTS), counter.store)
    facts.create("t")
    assert facts.apply("t", "e0", "TaskStarted", START).applied  # e0 again: another instance
    assert facts.apply("t", "p1", "PAY_SUCCESS", {"channel_ref": "ch-1", "amount": 3}).applied
    return counter, facts


def test_a_new_store_keeps_one_index_per_lookup_of_an_event(store_url: str) -> None:
    store = open_store(store_url)
    assert store.schema_version() == LATEST == 12
    indexes = _indexes(store)
    if store.dialect == "sqlite":
        assert indexes == {  # (the key is the table itself: no rowid)
            "sqlite_autoindex_statekit_events_2(event_id,instance_id)",
            "statekit_events_idempotency(idempotency_key,instance_id,type)",
        }
    else:
        assert indexes == {
            "statekit_events_pkey(instance_id,sequence)",
            "statekit_events_event_id_instance_id_key(event_id,instance_id)",
            "statekit_events_idempotency(idempotency_key,instance_id,type)",
        }


@pytest.mark.parametrize("upgraded", [False, True], ids=["schema-12", "upgraded-from-11"])
def test_every_guarantee_of_the_event_indexes_holds(store_url: str, upgraded: bool) -> None:
    counter, facts = _histories(store_url)
    if upgraded:
        written = _written(counter.store)
        before_schema_12(counter.store)
        assert any("(instance_id,event_id)" in i for i in _indexes(counter.store))
        counter.store.close()
        counter = Runner(chart_from(COUNTER), open_store(store_url))  # migrated on open
        facts = Runner(chart_from(FACTS), counter.store)
        assert counter.store.schema_version() == LATEST
        assert _written(counter.store) == written  # the same rows, column by column
        assert not any("(instance_id,event_id)" in i for i in _indexes(counter.store))
    assert counter.verify("c").ok and facts.verify("t").ok
    # a redelivery is recognised, on the row this runner holds and on a row read
    again = counter.apply("c", "e1", "Incr", {"by": 2})
    assert (again.status, again.duplicate, again.sequence) == (ALREADY, True, 2)
    fresh = Runner(chart_from(COUNTER), counter.store)
    other = fresh.apply("c", "e1", "Incr", {"by": 5})
    assert (other.status, other.reason) == (OutcomeStatus.CONFLICT, "EVENT_ID_PAYLOAD_CONFLICT")
    # the same fact under a new event ID is a duplicate of the first
    fact = facts.apply("t", "p2", "PAY_SUCCESS", {"channel_ref": "ch-1", "amount": 3})
    assert (fact.status, fact.first_event_id) == (ALREADY, "p1")
    # the database itself refuses a second row of an event ID or a fact in an instance
    for event_id, key in (("e1", None), ("p9", '["ch-1"]')):
        with pytest.raises(Exception) as refused, counter.store.write():
            counter.store.execute(
                "INSERT INTO statekit_events (instance_id, sequence, event_id, type, "
                "payload, payload_sha256, chart_version, evidence, recorded_at, "
                "idempotency_key) VALUES (?, 99, ?, ?, '{}', 'x', 1, '{}', 0, ?)",
                ("t" if key else "c", event_id, "PAY_SUCCESS" if key else "Incr", key),
            )
        assert "IntegrityError" in {c.__name__ for c in type(refused.value).__mro__}
    # the inspector's search finds an event ID in every instance, and a business key
    hits = [(h.instance_id, h.kind, h.event_id) for h in search(counter.store, "e0")]
    assert hits == [("c", "event", "e0"), ("t", "event", "e0")]
    keyed = [(h.instance_id, h.kind, h.event_id) for h in search(counter.store, '["ch-1"]')]
    assert keyed == [("t", "idempotency key", "p1")]
    # and the instances go on
    assert counter.apply("c", "e3", "Incr", {"by": 1}).version == 4
    assert counter.verify("c").ok and facts.verify("t").ok

"""The versioned schema: created on open, upgraded in place, never downgraded."""

from __future__ import annotations

import time

import pytest
from runner_charts import COUNTER, chart_from

from statekit.runner.errors import SchemaVersionError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.migrations import LATEST, MIGRATIONS, Migration


def test_a_new_store_is_at_the_latest_schema(store_url: str) -> None:
    store = open_store(store_url)
    assert store.schema_version() == LATEST
    assert open_store(store_url).schema_version() == LATEST  # reopening changes nothing
    rows = store.execute("SELECT version FROM statekit_schema_migrations").fetchall()
    assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]


def test_a_later_migration_upgrades_an_existing_database_in_place(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    runner.create("c")
    runner.apply("c", "e1", "Incr", {"by": 2})
    runner.store.close()
    step = Migration(
        LATEST + 1,
        "an index on events by type",
        ("CREATE INDEX statekit_events_type ON statekit_events (type)",),
        ("CREATE INDEX statekit_events_type ON statekit_events (type)",),
    )
    upgraded = open_store(store_url)
    assert upgraded.migrate((*MIGRATIONS, step)) == LATEST + 1
    assert upgraded.schema_version() == LATEST + 1
    assert upgraded.migrate((*MIGRATIONS, step)) == LATEST + 1  # applied once
    again = Runner(chart_from(COUNTER), upgraded)
    assert again.load("c").state.context["total"] == 2
    assert again.apply("c", "e2", "Incr", {"by": 1}).version == 2


def test_a_newer_schema_is_refused(store_url: str) -> None:
    store = open_store(store_url)
    with store.write():
        store.execute(
            "INSERT INTO statekit_schema_migrations (version, description, applied_at) "
            "VALUES (?, ?, ?)",
            (LATEST + 5, "from the future", time.time()),
        )
    store.close()
    with pytest.raises(SchemaVersionError, match=f"version {LATEST + 5}, newer than"):
        open_store(store_url)

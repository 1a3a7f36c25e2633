"""The throwaway PostgreSQL server of the tests: fresh databases on loopback."""

from __future__ import annotations

from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres


def test_each_database_it_creates_is_a_fresh_store(pg_server: ThrowawayPostgres) -> None:
    first = pg_server.create_database("server_test_a")
    second = pg_server.create_database("server_test_b")
    assert first.startswith("postgresql://postgres@127.0.0.1:") and first != second
    store = open_store(first)
    store.register_chart("sha256:x", "c", 1, None)
    assert [row.name for row in store.charts()] == ["c"]
    assert open_store(second).charts() == []

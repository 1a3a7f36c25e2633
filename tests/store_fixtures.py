"""Store fixtures for the runner's and the CLI's tests: a store of each kind.

PostgreSQL is a real server, started once per session on loopback (a throwaway
`initdb` + `pg_ctl`, see `statekit.testing.postgres_server`) and every test gets a
fresh database. When PostgreSQL is not installed the tests FAIL, never skip:
`make test` installs it (scripts/ensure-postgres.sh).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from statekit.testing.postgres_server import PostgresUnavailable, ThrowawayPostgres

_names = itertools.count(1)

FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
"""The tests' server never outlives a crash of its machine (the tests kill clients,
never the server), so nothing it writes must reach the disk; without the flushes
each test's `CREATE DATABASE` is cheaper: 20 of them on one connection took 9.8 s
with the defaults and 1.6 s with these (a loaded 2-core machine, PostgreSQL 15)."""


def _running(settings: dict[str, str]) -> Iterator[ThrowawayPostgres]:
    """A server started with `settings` for as long as the fixture lasts (never a skip:
    the tests need PostgreSQL)."""
    try:
        server = ThrowawayPostgres(settings).start()
    except PostgresUnavailable as exc:
        pytest.fail(f"PostgreSQL is required by the runner tests and could not start: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[ThrowawayPostgres]:
    """One PostgreSQL server for the session (for each pytest-xdist worker: its own)."""
    yield from _running(FAST_SETTINGS)


@pytest.fixture
def pg_url(pg_server: ThrowawayPostgres) -> str:
    """A fresh PostgreSQL database."""
    return pg_server.create_database(f"statekit_test_{next(_names)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'statekit.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


ShardURLs = Callable[[int], list[str]]
"""A maker of N fresh, empty databases (`shard_urls`)."""


@pytest.fixture(params=["sqlite", "postgresql"])
def shard_urls(request: pytest.FixtureRequest, tmp_path: Path) -> ShardURLs:
    """A maker of N fresh, empty databases of each kind (PostgreSQL: on one server), for a
    shard set."""
    if request.param == "sqlite":
        return lambda n: [f"sqlite:///{tmp_path / f'shard{next(_names)}.db'}" for _ in range(n)]
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    return lambda n: [server.create_database(f"statekit_shard_{next(_names)}") for _ in range(n)]


DURABLE_SETTINGS = {"fsync": "off", "full_page_writes": "off"}
"""For a server the tests stop: `synchronous_commit` on, as a real server commits (with it
off, an immediate shutdown loses the last commits the clients were told of); fsync stays
off, since the machine itself never crashes."""


@pytest.fixture(scope="session")
def restartable_server() -> Iterator[ThrowawayPostgres]:
    """A server of its own for the tests that stop and restart it (`halt`, `resume`,
    `restart`), so that the other tests' server is never stopped under them."""
    yield from _running(DURABLE_SETTINGS)


@pytest.fixture
def restartable_url(restartable_server: ThrowawayPostgres) -> str:
    """A fresh database on `restartable_server`."""
    return restartable_server.create_database(f"statekit_restart_{next(_names)}")

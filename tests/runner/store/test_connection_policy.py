"""The connection policy: URL parameters, backoff and deadline, and what a store does when
its server is away (statekit.runner.store.connection_policy)."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from pathlib import Path

import pytest
from store_fixtures import FAST_SETTINGS

from statekit.runner.errors import RunnerError, StoreUnavailableError, StoreURLError
from statekit.runner.store import open_read_only_store, open_store
from statekit.runner.store.connection_policy import (
    CONFLICT,
    CONNECT_TIMEOUT,
    LOST,
    RETRY_FOR,
    ConnectionPolicy,
    failure_kind,
    split_policy,
)
from statekit.testing.postgres_server import ThrowawayPostgres, free_port


def test_a_url_without_parameters_has_the_defaults() -> None:
    policy, url = split_policy("postgresql://app@db/app")
    assert (policy.connect_timeout, policy.retry_for) == (CONNECT_TIMEOUT, RETRY_FOR)
    assert url == "postgresql://app@db/app"


@pytest.mark.parametrize(
    ("url", "connect_timeout", "retry_for", "left"),
    [
        ("postgresql://a@h/d?retry_for=120", CONNECT_TIMEOUT, 120.0, "postgresql://a@h/d"),
        ("postgresql://a@h/d?connect_timeout=2.5", 2.5, RETRY_FOR, "postgresql://a@h/d"),
        (
            "postgresql://a@h/d?sslmode=disable&retry_for=0&application_name=x%20y",
            CONNECT_TIMEOUT,
            0.0,
            "postgresql://a@h/d?sslmode=disable&application_name=x%20y",
        ),
        ("sqlite:///x.db?retry_for=5&connect_timeout=1", 1.0, 5.0, "sqlite:///x.db"),
    ],
)
def test_the_parameters_are_read_and_taken_out_of_the_url(
    url: str, connect_timeout: float, retry_for: float, left: str
) -> None:
    policy, stripped = split_policy(url)
    assert (policy.connect_timeout, policy.retry_for) == (connect_timeout, retry_for)
    assert stripped == left


@pytest.mark.parametrize(
    ("query", "name", "column"),
    [
        ("retry_for=abc", "retry_for", 20),
        ("retry_for=-1", "retry_for", 20),
        ("retry_for=nan", "retry_for", 20),
        ("retry_for=inf", "retry_for", 20),
        ("retry_for=", "retry_for", 20),
        ("sslmode=disable&connect_timeout=0", "connect_timeout", 36),
        ("connect_timeout=-3", "connect_timeout", 20),
    ],
)
def test_a_bad_value_names_its_parameter_and_position(query: str, name: str, column: int) -> None:
    url = f"postgresql://a@h/d?{query}"
    with pytest.raises(StoreURLError) as caught:
        split_policy(url)
    message = str(caught.value)
    assert f"?{name}=" in message
    assert f"(character {column} of the URL)" in message
    assert url[column - 1 :].startswith(name)


def test_a_bad_value_is_refused_by_both_dialects_before_anything_is_opened(
    tmp_path: Path,
) -> None:
    with pytest.raises(StoreURLError, match="retry_for"):
        open_store(f"sqlite:///{tmp_path / 'x.db'}?retry_for=soon")
    assert not (tmp_path / "x.db").exists()
    with pytest.raises(StoreURLError, match="connect_timeout"):
        open_store("postgresql://a:secret@127.0.0.1:1/d?connect_timeout=never")


def test_a_sqlite_store_takes_the_policy(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'x.db'}?retry_for=7&busy_timeout=3")
    try:
        assert store.policy.retry_for == 7.0
    finally:
        store.close()


def test_the_backoff_doubles_and_is_bounded() -> None:
    policy = ConnectionPolicy()
    waits = [policy.backoff(n) for n in range(2000)]
    assert waits[0] == policy.first_backoff
    assert waits[1] == 2 * policy.first_backoff
    assert all(a <= b for a, b in itertools.pairwise(waits))
    assert max(waits) == policy.longest_backoff


@pytest.mark.parametrize("retry_for", [0.0, 0.2, 0.45])
def test_the_waits_never_pass_the_deadline(retry_for: float) -> None:
    deadline = ConnectionPolicy(retry_for=retry_for).deadline()
    while True:
        left = deadline.at - time.monotonic()
        wait = deadline.next_wait()
        if wait is None:
            break
        assert 0 < wait <= left
        time.sleep(wait)
    assert time.monotonic() >= deadline.at


class _Error(Exception):
    def __init__(self, sqlstate: str | None) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("sqlstate", "kind"),
    [
        ("08006", LOST),
        ("08001", LOST),
        ("57P01", LOST),
        ("57P02", LOST),
        ("57P03", LOST),
        ("53300", LOST),
        ("40001", CONFLICT),
        ("40P01", CONFLICT),
        ("23505", None),
        ("57014", None),
        ("53100", None),
    ],
)
def test_which_failures_are_retried(sqlstate: str, kind: str | None) -> None:
    assert failure_kind(_Error(sqlstate)) == kind


def test_a_sqlite_error_is_never_retried() -> None:
    import sqlite3

    assert failure_kind(sqlite3.OperationalError("disk I/O error")) is None
    assert failure_kind(sqlite3.OperationalError("database is locked")) is None


def test_a_server_that_is_not_there_is_a_statekit_error_with_advice() -> None:
    url = f"postgresql://postgres:hunter2@127.0.0.1:{free_port()}/app?retry_for=0.3"
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        open_store(url)
    assert time.monotonic() - started >= 0.3  # it waited (the deadline) before giving up
    message = str(caught.value)
    assert "hunter2" not in message
    assert f"postgresql://postgres@127.0.0.1:{url.split(':')[3]}" in message
    assert "retried for 0.3 s" in message
    assert "?retry_for=SECONDS" in message
    assert isinstance(caught.value, RunnerError)
    assert not isinstance(caught.value, ValueError)
    with pytest.raises(StoreUnavailableError):
        open_read_only_store(url)


def test_a_store_opened_while_its_server_starts_waits_for_it() -> None:
    server = ThrowawayPostgres(FAST_SETTINGS).start()
    try:
        server.halt("immediate")
        opened: list[object] = []

        def open_it() -> None:
            try:
                opened.append(open_store(server.url + "?retry_for=120"))
            except Exception as exc:  # reported by the assertion below
                opened.append(exc)

        # the port answers and hangs up, as a server not ready yet does: the attempt is
        # seen (accept) before the server starts, so the store has been refused once
        with socket.create_server(("127.0.0.1", server.port)) as listener:
            thread = threading.Thread(target=open_it)
            thread.start()
            refused, _ = listener.accept()
            refused.close()
        server.resume()
        thread.join()
        store = opened[0]
        assert not isinstance(store, Exception), store
        store.close()  # type: ignore[attr-defined]
    finally:
        server.stop()


def test_a_wrong_database_is_not_waited_for(pg_url: str) -> None:
    wrong = pg_url.rsplit("/", 1)[0] + "/no_such_database?retry_for=600"
    started = time.monotonic()
    with pytest.raises(StoreURLError, match="cannot connect"):
        open_store(wrong)
    assert time.monotonic() - started < 60  # refused at once, not after retry_for

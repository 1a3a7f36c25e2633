"""`statekit relay` when JetStream will not give it a stream says what to do (exit 2,
never a bare nats-py error): a server without JetStream → start it with -js; a stream
name another relay's prefix took → --stream NAME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import statekit
from relay_helpers import counter_with_messages, new_lane, running_broker

from statekit.testing.nats_server import ThrowawayNats


@pytest.fixture(scope="module")
def broker() -> Iterator[ThrowawayNats]:
    yield from running_broker()


def test_a_server_without_jetstream_is_told_to_start_with_js(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    counter_with_messages(url, 1, 1).store.close()
    with ThrowawayNats(jetstream=False) as plain:
        done = statekit("relay", "--db", url, "--to", f"{plain.url}/shop", "--once")
    assert done.returncode == 2, done.stderr
    assert "JetStream is not enabled on that server" in done.stderr, done.stderr
    assert "start nats-server with -js" in done.stderr and "Traceback" not in done.stderr


def test_a_stream_name_taken_by_another_prefix_points_to_stream(
    broker: ThrowawayNats, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    counter_with_messages(url, 1, 1).store.close()
    first, second = new_lane(broker), new_lane(broker)
    shared = first.stream
    done = statekit("relay", "--db", url, "--to", first.url, "--stream", shared, "--once")
    assert done.returncode == 0, done.stderr
    clash = statekit("relay", "--db", url, "--to", second.url, "--stream", shared, "--once")
    assert clash.returncode == 2, clash.stderr
    assert f"a stream named {shared} already exists there" in clash.stderr, clash.stderr
    assert "--stream NAME" in clash.stderr and "Traceback" not in clash.stderr
    own = statekit("relay", "--db", url, "--to", second.url, "--stream", second.stream, "--once")
    assert own.returncode == 0, own.stderr  # with a stream of its own it publishes

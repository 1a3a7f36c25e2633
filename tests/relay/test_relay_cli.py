"""`statekit relay` as a user runs it (a fresh process): `--once` publishes the outbox and
prints one JSON line per acknowledged message; without it the relay runs until SIGTERM
(exit 0); a `--to` that is not a NATS server it can use is a usage error saying why
(exit 2), never a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import statekit
from relay_helpers import (
    counter_with_messages,
    expected_ids,
    new_lane,
    per_instance,
    running_broker,
    stream_contents,
)
from runner_charts import chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.nats_server import ThrowawayNats

NOTES = """
statechart: notes
version: 1
description: Every note is emitted as a message with its text.
events:
  Note: {text: string}
initial: open
states:
  open:
    on:
      Note:
        do:
          - emit: {type: Noted, payload: {text: event.text}}
"""


@pytest.fixture(scope="module")
def broker() -> Iterator[ThrowawayNats]:
    yield from running_broker()


def test_once_publishes_the_outbox_and_prints_each_message(
    broker: ThrowawayNats, store_url: str
) -> None:
    counter_with_messages(store_url, 2, 3).store.close()
    lane = new_lane(broker)
    done = statekit("relay", "--db", store_url, "--to", lane.url, "--stream", lane.stream, "--once")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"statekit relay: publishing to stream {lane.stream} on {broker.url} ({lane.prefix}.>)\n"
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(x["instance_id"], x["message_id"]) for x in lines if x["instance_id"] == "i1"] == [
        ("i1", "e0/0"), ("i1", "e1/0"), ("i1", "e2/0"),
    ]  # fmt: skip
    assert {x["subject"] for x in lines} == {f"{lane.prefix}.counter.Counted"}
    assert sorted(x["stream_sequence"] for x in lines) == list(range(1, 7))
    assert not any(x["duplicate"] for x in lines)
    assert per_instance(stream_contents(broker.url, lane.stream)) == expected_ids(2, range(3))
    again = statekit(
        "relay", "--db", store_url, "--to", lane.url, "--stream", lane.stream, "--once"
    )
    assert (again.returncode, again.stdout) == (0, "")  # nothing left to publish


def test_without_once_it_runs_until_sigterm(broker: ThrowawayNats, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    counter_with_messages(url, 1, 3).store.close()
    lane = new_lane(broker)
    child = subprocess.Popen(
        [sys.executable, "-m", "statekit", "relay", "--db", url, "--to", lane.url,
         "--stream", lane.stream],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    lines = [json.loads(child.stdout.readline()) for _ in range(3)]  # all three published
    counter_with_messages(url, 1, 1, first=3).store.close()  # a fourth, while it runs
    lines.append(json.loads(child.stdout.readline()))
    child.send_signal(signal.SIGTERM)
    rest, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert rest == "" and "Traceback" not in err
    assert [x["message_id"] for x in lines] == ["e0/0", "e1/0", "e2/0", "e3/0"]


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("amqp://guest@127.0.0.1:5672/", "cannot relay to amqp://: statekit relays to NATS"),
        ("127.0.0.1:4222", "cannot relay to '127.0.0.1:4222': statekit relays to NATS"),
        ("nats://", "names no host"),
        ("nats://127.0.0.1:99999", "the port must be a number from 1 to 65535"),
        ("nats://127.0.0.1:4222/a..b", "the subject prefix 'a..b' must be tokens"),
        ("nats://127.0.0.1:4222/orders?x=1", "a relay URL takes no ?query"),
        ("nats://127.0.0.1:1", "cannot reach the NATS server at nats://127.0.0.1:1: Connection"),
        ("nats://u:secret@nohost.invalid", "cannot reach the NATS server at nats://u@nohost"),
    ],
)
def test_a_target_it_cannot_use_is_a_usage_error(tmp_path: Path, target: str, said: str) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    counter_with_messages(url, 1, 1).store.close()
    done = statekit("relay", "--db", url, "--to", target, "--once")
    assert done.returncode == 2
    assert said in done.stderr and done.stderr.count("Error: --to: ") == 1
    assert "Traceback" not in done.stderr and "secret" not in done.stderr
    assert "internal error" not in done.stderr and done.stdout == ""


def test_a_message_the_broker_refuses_ends_dead_and_once_exits_1(
    broker: ThrowawayNats, tmp_path: Path
) -> None:
    """A message over the server's largest payload (1 MB) fails each publish and ends dead
    after --max-attempts; then it no longer holds its instance's next message back."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    notes = Runner(chart_from(NOTES), open_store(url))
    notes.create("big")
    notes.apply("big", "e0", "Note", {"text": "x" * 1_100_000})
    notes.apply("big", "e1", "Note", {"text": "after it"})
    notes.create("small")
    notes.apply("small", "e0", "Note", {"text": "hello"})
    notes.store.close()
    lane = new_lane(broker)
    args = ["relay", "--db", url, "--to", lane.url, "--stream", lane.stream, "--once"]
    done = statekit(*args, "--max-attempts", "1")
    assert done.returncode == 1
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    published = sorted((x["instance_id"], x["message_id"]) for x in lines)
    assert published == [("big", "e1/0"), ("small", "e0/0")]
    refused = "statekit relay: message 'e0/0' of 'big' not published (attempt 1): "
    assert refused in done.stderr and "Traceback" not in done.stderr
    listed = statekit("outbox", "--db", url, "--status", "dead", "--format", "json")
    assert '"e0/0"' in listed.stdout and "big" in listed.stdout
    again = statekit(*args)
    assert (again.returncode, again.stdout) == (0, "")  # a dead message is not retried

"""`run`, `worker`, `verify` and `outbox` given a shard set (`--db` repeated), as a user runs
them: each line goes to its instance's shard, every shard is read and its timers fired,
and a set given otherwise than laid out is refused (exit 2) before anything is written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import ROOT, statekit
from runner_charts import COUNTER, LEASE, chart_from, write_chart
from store_fixtures import ShardURLs

from statekit.runner.runner import Runner, wall_clock_ms
from statekit.runner.shard_layout import shard_of
from statekit.runner.sharding import ShardedRunner
from statekit.runner.store import open_read_only_store, open_store

PAST = 1_000_000  # epoch ms: everything armed then is long due
INSTANCES = [f"c{n}" for n in range(8)]


def _lines(n: int) -> str:
    """`n` rounds of one Incr for every instance of INSTANCES, as `run` reads them."""
    return "".join(
        json.dumps({"instance": i, "event_id": f"{i}-{k}", "type": "Incr", "payload": {"by": 1}})
        + "\n"
        for k in range(n)
        for i in INSTANCES
    )


def _db(urls: list[str]) -> list[str]:
    return [arg for url in urls for arg in ("--db", url)]


def test_run_routes_each_line_and_verify_and_outbox_read_every_shard(
    shard_urls: ShardURLs, tmp_path: Path
) -> None:
    urls = shard_urls(3)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    done = statekit("run", chart, *_db(urls), "--batch", "5", stdin=_lines(2))
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(a["instance"], a["event_id"]) for a in answers] == [
        (i, f"{i}-{k}") for k in range(2) for i in INSTANCES
    ]  # in the order given, across shards
    assert {a["status"] for a in answers} == {"APPLIED"}
    assert {shard_of(i, 3) for i in INSTANCES} == {0, 1, 2}
    for index, url in enumerate(urls):
        with open_read_only_store(url) as store:
            held = store.instance_ids()
        assert held == sorted(i for i in INSTANCES if shard_of(i, 3) == index)
    checked = statekit("verify", *_db(urls), "--format", "json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert sorted(json.loads(line)["instance"] for line in checked.stdout.splitlines()) == sorted(
        INSTANCES
    )
    assert checked.stderr.strip() == "8 instance(s) in 3 shards, 0 with differences"
    listed = statekit("outbox", *_db(urls), "--format", "json")
    assert listed.returncode == 0, listed.stderr
    messages = [json.loads(line) for line in listed.stdout.splitlines()]
    assert len(messages) == 2 * len(INSTANCES)
    assert {(m["instance"], m["shard"]) for m in messages} == {
        (i, shard_of(i, 3) + 1) for i in INSTANCES
    }
    assert listed.stderr.strip() == "16 pending in the outbox"


def test_worker_fires_the_due_timers_of_every_shard(shard_urls: ShardURLs, tmp_path: Path) -> None:
    urls = shard_urls(2)
    with ShardedRunner.open(chart_from(LEASE), urls, clock=lambda: PAST) as runner:
        for instance in INSTANCES:
            runner.create(instance)
            runner.apply(instance, f"{instance}-start", "Start")
        assert {runner.shards.index_of(i) for i in INSTANCES} == {0, 1}
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    done = statekit("worker", *_db(urls), "--chart", chart, "--once")
    assert done.returncode == 0, done.stderr
    assert "in 2 shards" in done.stderr
    fired = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((x["instance"], x["event_id"].split("/")[1]) for x in fired) == sorted(
        (i, timer) for i in INSTANCES for timer in ("after(30s)@running", "reminder")
    )
    for url in urls:
        with open_read_only_store(url) as store:
            assert store.timers() == []
    assert statekit("verify", *_db(urls)).returncode == 0
    again = statekit("worker", *_db(urls), "--chart", chart, "--once")
    assert (again.returncode, again.stdout) == (0, "")


@pytest.mark.parametrize("command", ["run", "worker", "verify", "outbox"])
@pytest.mark.parametrize(
    ("arrange", "message"),
    [
        ("swapped", "was given as shard 1: give the URLs in the order"),
        ("missing", "a shard is missing: give all 3"),
        ("added", "a shard was added: give the 3"),
    ],
)
def test_a_set_given_otherwise_is_refused_by_every_command(
    shard_urls: ShardURLs, tmp_path: Path, command: str, arrange: str, message: str
) -> None:
    urls = shard_urls(4)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    laid_out = statekit("run", chart, *_db(urls[:3]), stdin=_lines(1))
    assert laid_out.returncode == 0, laid_out.stderr
    open_store(urls[3]).close()  # a store of its own
    given = {
        "swapped": [urls[1], urls[0], urls[2]],
        "missing": urls[:2],
        "added": urls,
    }[arrange]
    args = {
        "run": ["run", chart, *_db(given)],
        "worker": ["worker", *_db(given), "--chart", chart, "--once"],
        "verify": ["verify", *_db(given)],
        "outbox": ["outbox", *_db(given)],
    }[command]
    done = statekit(*args, stdin=_lines(1).replace("-0", "-1"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
    with ShardedRunner.open(chart_from(COUNTER), urls[:3], read_only=True) as runner:
        assert {runner.load(i).version for i in INSTANCES} == {1}  # nothing more applied


def test_run_refuses_one_shard_of_a_set(shard_urls: ShardURLs, tmp_path: Path) -> None:
    urls = shard_urls(2)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    assert statekit("run", chart, *_db(urls), stdin=_lines(1)).returncode == 0
    done = statekit("run", chart, "--db", urls[1], stdin=_lines(1).replace("-0", "-1"))
    assert done.returncode == 2
    assert "is shard 2 of 2 of shard set" in done.stderr
    assert "give every database of the set with --db" in done.stderr


def test_verify_names_an_instance_stored_in_another_shard(
    shard_urls: ShardURLs, tmp_path: Path
) -> None:
    urls = shard_urls(2)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    assert statekit("run", chart, *_db(urls), stdin=_lines(1)).returncode == 0
    stray = next(i for i in (f"x{n}" for n in range(100)) if shard_of(i, 2) == 1)
    with open_store(urls[0]) as store:  # written without the router
        Runner(chart_from(COUNTER), store).create(stray)
    done = statekit("verify", *_db(urls))
    assert done.returncode == 1
    assert f"instance {stray!r} is stored in shard 1 but routes to shard 2 of 2" in done.stdout
    assert done.stderr.strip().endswith("0 with differences; 1 shard(s) differ as a whole")


def test_worker_over_shards_delivers_timers_as_they_come_due_and_stops_cleanly(
    shard_urls: ShardURLs, tmp_path: Path
) -> None:
    urls = shard_urls(2)
    first, second = "c0", next(i for i in INSTANCES if shard_of(i, 2) != shard_of("c0", 2))
    now = wall_clock_ms()
    with ShardedRunner.open(chart_from(LEASE), urls) as runner:  # the wall clock
        for instance, delay in ((first, 300), (second, 600)):
            runner.create(instance)
            runner.apply(instance, "e1", "Deadline", {"at": now + delay})
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    child = subprocess.Popen(
        [sys.executable, "-m", "statekit", "worker", *_db(urls), "--chart", chart],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None and child.stderr is not None
    assert "in 2 shards" in child.stderr.readline()
    delivered = [json.loads(child.stdout.readline()) for _ in range(2)]  # each as it came due
    assert sorted((x["instance"], x["state"]) for x in delivered) == sorted(
        [(first, ["done"]), (second, ["done"])]
    )  # (both may be due by the time the worker is up: in either order)
    os.kill(child.pid, signal.SIGTERM)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out == "" and "Traceback" not in err
    with ShardedRunner.open(chart_from(LEASE), urls, read_only=True) as runner:
        for instance, delay in ((first, 300), (second, 600)):
            clock_ms = runner.history(instance)[-1].clock_ms
            assert clock_ms is not None and clock_ms >= now + delay

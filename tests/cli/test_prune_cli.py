"""`statekit prune` as a cron job runs it, on both stores: a dry run counting, the real
run removing, verify saying where it checked from, and every bad input an exit 2
with a message (never a traceback), a damaged instance an exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import COUNTER, write_chart
from store_fixtures import ShardURLs

from statekit.api import load
from statekit.runner.outbox import Dispatcher
from statekit.runner.runner import Runner
from statekit.runner.shard_layout import open_shard_set, shard_of
from statekit.runner.sharding import ShardedRunner
from statekit.runner.store import open_store


def written(url: str, tmp_path: Path) -> Path:
    """Instance c: 7 events, snapshots at 3 and 6, every message delivered, those of the
    first four events eight days ago."""
    path = write_chart(COUNTER, tmp_path, "counter")
    runner = Runner(load(path), open_store(url), snapshot_every=3)
    runner.create("c")
    for n in range(7):
        assert runner.apply("c", f"e{n}", "Incr", {"by": n + 1}).applied
    Dispatcher(runner.store, {"Counted": lambda m: None}).run_until_idle()
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_outbox SET delivered_at = delivered_at - 8 * 86400 WHERE sequence <= 4"
        )
    runner.store.close()
    return path


def test_prune_then_verify(store_url: str, tmp_path: Path) -> None:
    written(store_url, tmp_path)
    everything = ("--events-before-snapshot", "--format", "json")  # delivered: 7 days
    dry = statekit("prune", "--db", store_url, *everything, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    counted = json.loads(dry.stdout)
    assert (counted["dry_run"], counted["events_thinned"]) == (True, 6)
    assert counted["outbox_messages"] == 4  # those delivered eight days ago
    done = statekit("prune", "--db", store_url, *everything, "--batch", "2")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["events_thinned"], report["outbox_messages"]) == (6, 4)
    assert report["instances_thinned"] == [{"instance": "c", "through": 6}]
    assert report["batches"] >= 4
    again = statekit("prune", "--db", store_url, "--events-before-snapshot")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("removed: 0 delivered message(s)")
    checked = statekit("verify", "--db", store_url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == (
        "c: ok (version 7, 7 events; checked from the snapshot at #6, the events before it "
        "were pruned)\n"
    )
    data = json.loads(statekit("verify", "--db", store_url, "--format", "json").stdout)
    assert (data["ok"], data["checked_from"]) == (True, 6)


def test_a_damaged_instance_exits_1_and_the_rest_is_pruned(store_url: str, tmp_path: Path) -> None:
    written(store_url, tmp_path)
    store = open_store(store_url)
    with store.write():
        store.execute('UPDATE statekit_instances SET context = \'{"total": 1, "count": 7}\'')
    store.close()
    done = statekit("prune", "--db", store_url, "--events-before-snapshot")
    assert done.returncode == 1, done.stderr
    assert "c: skipped: verify finds it damaged (context.total: stored 1, replayed 28)" in (
        done.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--delivered-before", "7"), "'7' is not a duration"),
        (("--inbox-before", "2 days"), "--inbox-before: '2 days' is not a duration"),
        (("--rejections-before", "0h"), "'0h' is no time at all"),
        (("--batch", "0"), "0 is not in the range 1<=x<=100000"),
    ],
)
def test_bad_input_exits_2_in_words(
    args: tuple[str, ...], message: str, store_url: str, tmp_path: Path
) -> None:
    done = statekit("prune", "--db", store_url, *args)
    assert done.returncode == 2 and message in " ".join(done.stderr.split()), done.stderr
    assert "Traceback" not in done.stderr


def test_no_store_is_created(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    for extra in ((), ("--dry-run",)):
        done = statekit("prune", "--db", f"sqlite:///{path}", *extra)
        assert done.returncode == 2 and "no statekit store" in done.stderr, done.stderr
    assert not path.exists()


def test_a_shard_set_is_pruned_shard_by_shard_and_refused_given_otherwise(
    shard_urls: ShardURLs, tmp_path: Path
) -> None:
    urls = shard_urls(2)
    path = write_chart(COUNTER, tmp_path, "counter")
    sharded = ShardedRunner(load(path), open_shard_set(urls))
    ids = [f"c{n}" for n in range(6)]
    for i in ids:
        sharded.create(i)
        assert sharded.apply(i, f"{i}-1", "Incr", {"by": 1}).applied
    owners = {shard_of(i, 2) for i in ids}
    assert owners == {0, 1}  # both shards hold messages
    for url in urls:
        store = open_store(url)
        Dispatcher(store, {"Counted": lambda m: None}).run_until_idle()
        with store.write():
            store.execute("UPDATE statekit_outbox SET delivered_at = delivered_at - 8 * 86400")
        store.close()
    sharded.close()
    db = [arg for url in urls for arg in ("--db", url)]
    swapped = [arg for url in reversed(urls) for arg in ("--db", url)]
    refused = statekit("prune", *swapped)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    done = statekit("prune", *db, "--format", "json")
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["shard"] for r in reports] == [1, 2]  # counted from 1, as `outbox` counts
    removed = {r["shard"]: r["outbox_messages"] for r in reports}
    assert removed == {s + 1: sum(shard_of(i, 2) == s for i in ids) for s in (0, 1)}
    checked = statekit("verify", *db)
    assert checked.returncode == 0, checked.stdout + checked.stderr

"""`statekit worker` and `statekit timers` as a user runs them (real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import LEASE, chart_from, write_chart

from statekit.runner.runner import Runner, wall_clock_ms
from statekit.runner.store import open_store

PAST = 1_000_000  # epoch ms: everything armed then is long due


def started(url: str, *instances: str, clock: int = PAST) -> Runner:
    runner = Runner(chart_from(LEASE), open_store(url), clock=lambda: clock)
    for instance in instances:
        runner.create(instance)
        runner.apply(instance, f"{instance}-start", "Start")
    return runner


def test_worker_once_writes_one_outcome_line_per_delivery(store_url: str, tmp_path: Path) -> None:
    runner = started(store_url, "a", "b")
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    done = statekit("worker", "--db", store_url, "--chart", chart, "--once")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((x["instance"], x["event_id"].split("/")[1], x["status"]) for x in lines) == [
        ("a", "after(30s)@running", "APPLIED"),
        ("a", "reminder", "APPLIED"),
        ("b", "after(30s)@running", "APPLIED"),
        ("b", "reminder", "APPLIED"),
    ]
    assert {x["state"][0] for x in lines if "after" in x["event_id"]} == {"expired"}
    assert runner.store.timers() == []
    assert runner.verify("a").ok and runner.verify("b").ok
    again = statekit("worker", "--db", store_url, "--chart", chart, "--once")
    assert (again.returncode, again.stdout) == (0, "")


def test_worker_reports_rows_that_do_not_fit_once_and_delivers_the_rest(
    store_url: str, tmp_path: Path
) -> None:
    runner = started(store_url, "a", "b")
    with runner.store.write():
        runner.store.execute(
            "UPDATE statekit_timers SET payload = '{' WHERE instance_id = 'a' "
            "AND timer_id = 'reminder'"
        )
        runner.store.execute(
            "INSERT INTO statekit_timers (instance_id, timer_id, generation, event, payload, "
            "due_ms, sequence) VALUES ('ghost', 'reminder', 1, 'Remind', '{}', 5, 0)"
        )
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    done = statekit("worker", "--db", store_url, "--chart", chart, "--once")
    assert done.returncode == 1, done.stderr
    skipped = [line for line in done.stderr.splitlines() if line.endswith("skipped")]
    assert len(skipped) == 2, done.stderr
    assert any("'a'" in line and "payload" in line for line in skipped)
    assert any("'ghost'" in line and "not stored" in line for line in skipped)
    assert "Traceback" not in done.stderr
    fired = {(x["instance"], x["event_id"].split("/")[1]) for x in map(json.loads,
             done.stdout.splitlines())}  # fmt: skip
    assert ("a", "reminder") not in fired and ("b", "reminder") in fired
    assert ("a", "after(30s)@running") in fired


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_worker_delivers_as_timers_come_due_and_stops_cleanly(
    store_url: str, tmp_path: Path, signum: int
) -> None:
    runner = Runner(chart_from(LEASE), open_store(store_url))  # the wall clock
    runner.create("a")
    now = wall_clock_ms()
    runner.apply("a", "e1", "Deadline", {"at": now + 300})  # due in 0.3 s
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    child = subprocess.Popen(
        [sys.executable, "-m", "statekit.cli", "worker", "--db", store_url, "--chart", chart],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    assert "delivering the timers of lease v1" in child.stderr.readline()
    line = json.loads(child.stdout.readline())  # written when it came due
    assert (line["instance"], line["status"], line["state"]) == ("a", "APPLIED", ["done"])
    event = runner.history("a")[-1]
    assert event.clock_ms is not None and event.clock_ms >= now + 300
    os.kill(child.pid, signum)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out == "" and "Traceback" not in err


def test_timers_lists_the_armed_timers(store_url: str) -> None:
    started(store_url, "a")
    text = statekit("timers", "--db", store_url)
    assert text.returncode == 0, text.stderr
    assert "a  lease v1  reminder  due 1970-01-01T00:16:50.000Z  overdue by" in text.stdout
    assert "2 timer(s) armed" in text.stderr
    listed = statekit("timers", "--db", store_url, "--format", "json")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["instance"], r["timer"], r["due_ms"]) for r in rows] == [
        ("a", "reminder", PAST + 10_000),
        ("a", "after(30s)@running", PAST + 30_000),
    ]
    assert all(r["in_ms"] < 0 for r in rows)


def test_timers_tells_the_versions_of_a_charts_instances_apart(
    store_url: str, tmp_path: Path
) -> None:
    started(store_url, "a").store.close()
    v2 = LEASE.replace("version: 1\n", "version: 2\n")
    runner = Runner(chart_from(v2), open_store(store_url), clock=lambda: PAST)
    runner.create("b")
    runner.apply("b", "b-start", "Start")
    runner.store.close()
    chart = str(write_chart(v2, tmp_path, "lease"))
    text = statekit("timers", "--db", store_url, "--chart", chart)
    assert text.returncode == 0, text.stderr
    assert sorted(line.split("  ")[:3] for line in text.stdout.splitlines()) == [
        ["a", "lease v1", "after(30s)@running"],
        ["a", "lease v1", "reminder"],
        ["b", "lease v2", "after(30s)@running"],
        ["b", "lease v2", "reminder"],
    ]
    listed = statekit("timers", "--db", store_url, "--chart", chart, "--format", "json")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted((r["instance"], r["chart"], r["chart_version"]) for r in rows) == [
        ("a", "lease", 1),
        ("a", "lease", 1),
        ("b", "lease", 2),
        ("b", "lease", 2),
    ]


@pytest.mark.parametrize(
    "args, code, says",
    [
        (["worker", "--db", "nosuch://x", "--chart", "CHART", "--once"], 2, "unknown store"),
        (["worker", "--db", "URL", "--chart", "BROKEN", "--once"], 1, "error["),
        (["worker", "--db", "URL", "--once"], 2, "--chart"),
        (["timers", "--db", "nosuch://x"], 2, "unknown store"),
    ],
)
def test_bad_input_is_a_clear_message(
    store_url: str, tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    broken = str(write_chart(LEASE.replace("to: expired", "to: nowhere"), tmp_path, "broken"))
    names = {"CHART": chart, "BROKEN": broken, "URL": store_url}
    done = statekit(*[names.get(a, a) for a in args])
    assert done.returncode == code, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr

"""Real processes against one store: contention and SIGKILL at random points.

- 8 processes x 500 conflicting applies on 10 instances: versions contiguous,
  every attempt accounted for, no lost update;
- a child applying events is killed with SIGKILL 100 times: every acknowledged
  event is present, every instance equals the replay of its events, every
  committed event has its outbox rows.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from runner_charts import COUNTER, chart_from, write_chart

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

WORKER = Path(__file__).resolve().parent / "runner_workers.py"
PROCESSES, ATTEMPTS, INSTANCES = 8, 500, 10
KILLS = 100
STATUSES = {"APPLIED", "ALREADY_APPLIED", "REJECTED", "CONFLICT"}


def _runner(url: str, instances: int) -> Runner:
    runner = Runner(chart_from(COUNTER), open_store(url))
    for i in range(instances):
        runner.create(f"i{i}")
    return runner


def test_contention_keeps_versions_contiguous_and_loses_no_update(
    store_url: str, tmp_path: Path
) -> None:
    runner = _runner(store_url, INSTANCES)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    command = [sys.executable, str(WORKER), "contend", store_url, chart]
    workers = [
        subprocess.Popen(
            [*command, str(w), str(ATTEMPTS), str(INSTANCES), str(1000 + w)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    attempts: list[list[Any]] = []
    for proc in workers:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        attempts.extend(json.loads(line) for line in out.splitlines())
    assert len(attempts) == PROCESSES * ATTEMPTS
    statuses = Counter(a[3] for a in attempts)
    assert set(statuses) <= STATUSES
    reasons = Counter(a[4] for a in attempts if a[3] == "CONFLICT")
    assert set(reasons) == {"VERSION_CONFLICT"} and reasons["VERSION_CONFLICT"] > 0
    assert {a[4] for a in attempts if a[3] == "REJECTED"} == {"NOT_POSITIVE"}
    applied = {(a[0], a[1]): a for a in attempts if a[3] == "APPLIED"}
    assert len(applied) == statuses["APPLIED"]  # no event ID applied twice
    total_events = 0
    for i in range(INSTANCES):
        instance = f"i{i}"
        history = runner.history(instance)
        loaded = runner.load(instance)
        assert [e.sequence for e in history] == list(range(1, loaded.version + 1))
        total_events += len(history)
        for event in history:
            first = applied[(instance, event.event_id)]
            assert (first[5], first[6]) == (event.sequence, event.sequence)
        # no lost update: the state holds every applied increment, exactly once
        assert loaded.state.context["total"] == sum(e.payload["by"] for e in history)
        assert loaded.state.context["count"] == loaded.version
        assert runner.verify(instance).ok
    assert total_events == statuses["APPLIED"]
    for a in attempts:  # duplicates point at an event that was applied
        if a[3] == "ALREADY_APPLIED":
            assert (a[0], a[1]) in applied


def test_sigkill_at_random_points_loses_no_acknowledged_event(
    store_url: str, tmp_path: Path
) -> None:
    instances = 5
    runner = _runner(store_url, instances)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    rng = random.Random(7)
    acknowledged: list[tuple[str, str, str, int]] = []
    awaited = 0  # acknowledgements read before a kill: work done whatever the machine's load
    for run in range(KILLS):
        arguments = [store_url, chart, str(run), str(instances), str(run)]
        child = subprocess.Popen(
            [sys.executable, str(WORKER), "crash", *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n", child.stderr.read() if child.stderr else ""
        early = [child.stdout.readline() for _ in range(rng.randrange(4))]
        awaited += len(early)
        time.sleep(rng.uniform(0.0, 0.004))  # then a random point, often inside a transaction
        os.kill(child.pid, signal.SIGKILL)
        out, _ = child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL
        lines = early + out.splitlines()
        acknowledged.extend(
            tuple(json.loads(line)) for line in lines if line.rstrip().endswith("]")
        )
    assert awaited > KILLS  # the children did get work done between kills
    assert len(acknowledged) >= awaited
    events = {}
    for i in range(instances):
        for event in runner.history(f"i{i}"):
            events[(f"i{i}", event.event_id)] = event.sequence
    for instance, event_id, status, version in acknowledged:
        assert status == "APPLIED"
        assert events[(instance, event_id)] == version, (instance, event_id)
    for i in range(instances):
        report = runner.verify(f"i{i}")  # state == replay; every event has its outbox row
        assert report.ok, report
        outbox = runner.store.outbox(["pending"], f"i{i}")
        assert len(outbox) == report.events
    if store_url.startswith("sqlite"):
        assert runner.store.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

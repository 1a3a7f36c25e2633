"""Real processes sending the same facts under their own event IDs at once, on SQLite and
PostgreSQL: 8 processes x 90 facts on 3 instances. Per fact exactly one event applies;
every other attempt is a duplicate naming it (same payload) or a BUSINESS_KEY_CONFLICT
naming it (another payload); versions stay contiguous and each instance verifies."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from runner_charts import FACTS, chart_from, write_chart

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

WORKER = Path(__file__).resolve().parent / "fact_workers.py"
PROCESSES, FACTS_SENT, INSTANCES = 8, 90, 3


def test_one_fact_sent_by_many_processes_at_once_applies_once(
    store_url: str, tmp_path: Path
) -> None:
    runner = Runner(chart_from(FACTS), open_store(store_url))
    for i in range(INSTANCES):
        runner.create(f"i{i}")
        assert runner.apply(f"i{i}", f"start-{i}", "TaskStarted", {"attempt": 1, "worker": "w"})
    chart = str(write_chart(FACTS, tmp_path, "facts"))
    command = [sys.executable, str(WORKER), store_url, chart]
    workers = [
        subprocess.Popen(
            [*command, str(w), str(FACTS_SENT), str(INSTANCES), str(100 + w)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    for proc in workers:  # every worker is connected before any sends
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
    attempts: list[list[Any]] = []
    for proc in workers:
        out, err = proc.communicate("go\n", timeout=600)
        assert proc.returncode == 0, err
        attempts.extend(json.loads(line) for line in out.splitlines())
    assert len(attempts) == PROCESSES * FACTS_SENT
    by_fact: dict[tuple[str, str], list[list[Any]]] = defaultdict(list)
    for a in attempts:
        by_fact[(a[0], a[2])].append(a)
    assert len(by_fact) == FACTS_SENT
    statuses: set[tuple[str, str | None]] = set()
    for i in range(INSTANCES):
        instance = f"i{i}"
        history = runner.history(instance)
        loaded = runner.load(instance)
        assert [e.sequence for e in history] == list(range(1, loaded.version + 1))
        events = {e.event_id: e for e in history}
        paid = 0
        for (where, ref), tries in by_fact.items():
            if where != instance:
                continue
            applied = [a for a in tries if a[4] == "APPLIED"]
            assert len(applied) == 1, tries  # exactly one applies
            winner = applied[0]
            event = events[winner[1]]
            assert (event.sequence, event.payload["channel_ref"]) == (winner[7], ref)
            assert event.idempotency_key == json.dumps([ref])
            paid += winner[3]
            for a in tries:
                if a is winner:
                    continue
                statuses.add((a[4], a[5]))
                assert a[8] == winner[1], a  # names the event that recorded the fact
                if a[3] == winner[3]:
                    assert (a[4], a[5], a[9], a[7]) == ("ALREADY_APPLIED", None, True, winner[7])
                else:
                    assert (a[4], a[5]) == ("CONFLICT", "BUSINESS_KEY_CONFLICT"), a
        assert loaded.state.context["paid"] == paid
        facts_here = sum(1 for where, _ in by_fact if where == instance)
        assert loaded.version == 1 + facts_here  # the start, then one event per fact
        audits = runner.rejections(instance)
        assert len(audits) == sum(len(t) - 1 for (w, _), t in by_fact.items() if w == instance)
        assert runner.verify(instance).ok
    assert statuses == {("ALREADY_APPLIED", None), ("CONFLICT", "BUSINESS_KEY_CONFLICT")}

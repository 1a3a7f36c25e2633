"""`statekit migrate` of an instance whose state holds an armed `after` timer and is
renamed: the timer moves with the state (its ID names the path), keeps its due time
and generation, `verify` stays clean, and `statekit worker` delivers it when it was
due, never before; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_process import statekit as statekit_cli
from runner_charts import write_chart
from test_version_digest import V1, event_line

TIMED_V1 = V1.replace(
    "    on:\n      Close: closed", "    after:\n      2s: closed\n    on:\n      Close: closed"
)
TIMED_V2 = (
    TIMED_V1.replace(
        "version: 1\n", "version: 2\nmigrations:\n  - from: 1\n    rename: {open: ajar}\n"
    )
    .replace("Open: {to: open,", "Open: {to: ajar,")
    .replace("\n  open:\n", "\n  ajar:\n")
)


def _timers(store_url: str) -> list[dict[str, object]]:
    done = statekit_cli("timers", "--db", store_url, "--format", "json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_worker_delivers_a_timer_moved_by_a_rename_at_its_original_due_time(
    store_url: str, tmp_path: Path
) -> None:
    v1, v2 = write_chart(TIMED_V1, tmp_path, "v1"), write_chart(TIMED_V2, tmp_path, "v2")
    assert (
        statekit_cli(
            "run", str(v1), "--db", store_url, stdin=event_line("a", "a1", "Open")
        ).returncode
        == 0
    )
    ((armed,),) = [_timers(store_url)]
    assert armed["timer"] == "after(2s)@open"
    migrated = statekit_cli("migrate", "--db", store_url, "--chart", str(v2))
    assert migrated.returncode == 0, migrated.stderr
    ((moved,),) = [_timers(store_url)]
    assert (moved["timer"], moved["due_ms"], moved["generation"]) == (
        "after(2s)@ajar",
        armed["due_ms"],
        armed["generation"],
    )
    assert statekit_cli("verify", "--db", store_url).returncode == 0
    worker = ("worker", "--db", store_url, "--chart", str(v2), "--once")
    early = statekit_cli(*worker)
    if time.time() * 1000 < int(str(moved["due_ms"])):  # the worker ran before the due time
        assert (early.returncode, early.stdout) == (0, "")
    while time.time() * 1000 <= int(str(moved["due_ms"])):
        time.sleep(0.05)  # waiting for the wall clock: the worker's only clock
    done = statekit_cli(*worker)
    assert done.returncode == 0, done.stderr
    delivered = [json.loads(line) for line in (early.stdout + done.stdout).splitlines()]
    assert [(d["instance"], d["status"]) for d in delivered] == [("a", "APPLIED")]
    assert _timers(store_url) == []
    assert statekit_cli("verify", "--db", store_url).returncode == 0

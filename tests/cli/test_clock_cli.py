"""`statekit run` with a chart that reads `now`: the first event of a new instance is
checked, created and applied with the runner's clock reading, never refused for want of
one (through the real command in a pipe)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_process import statekit
from runner_charts import chart_from, write_chart

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

STAMPED = """
statechart: stamped
context:
  created_at: {type: integer, default: 0}
  seen_after: {type: integer, default: -1}
events:
  SEEN: {}
initial: fresh
states:
  fresh:
    entry: [{assign: {created_at: now}}]
    on:
      SEEN: {to: seen, do: [{assign: {seen_after: now - ctx.created_at}}]}
  seen: {}
"""


def test_run_creates_and_steps_an_instance_that_reads_now(tmp_path: Path) -> None:
    chart = str(write_chart(STAMPED, tmp_path, "stamped"))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    before = int(time.time() * 1000)
    line = {"instance": "s-1", "event_id": "e1", "type": "SEEN", "payload": {}}
    done = statekit("run", chart, "--db", url, stdin=json.dumps(line) + "\n")
    assert done.returncode == 0, done.stderr
    assert [json.loads(x)["status"] for x in done.stdout.splitlines()] == ["APPLIED"]
    store = open_store(url)
    try:
        context = Runner(chart_from(STAMPED), store).load("s-1").state.context
    finally:
        store.close()
    assert context["created_at"] >= before and context["seen_after"] >= 0

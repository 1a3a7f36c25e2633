"""A chart whose entry actions read `_event` (null at the start, the event that entered, the
raised event once taken up, the last event on an eventless transition) runs through
`statekit run` on each store kind; the stored context is the engine's, a new runner over
the same store loads it, and `statekit verify` replays the history to the same state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import statekit
from runner_charts import chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

CHART = """
statechart: ticket
context:
  log: {type: list, items: {type: string, nullable: true}, default: []}
events:
  RESOLVE: {note: string}
  CANCEL: {}
  CHECKED: {}
  REOPEN: {}
initial: open
states:
  open:
    entry: [{assign: {log: "ctx.log + [_event.name]"}}]
    on:
      RESOLVE: resolving
      CANCEL: {to: cancelled, do: [{raise: CHECKED}]}
    reject: {REOPEN: NOT_CLOSED, CHECKED: NOT_CANCELLED}
  resolving:
    always: closed
  cancelled:
    on: {CHECKED: closed}
    reject: {RESOLVE: CANCELLED, CANCEL: CANCELLED, REOPEN: CANCELLED}
  closed:
    entry: [{assign: {log: "ctx.log + [_event.name]"}}]
    exit: [{assign: {log: "ctx.log + [_event.name]"}}]
    on: {REOPEN: open}
    reject: {RESOLVE: CLOSED, CANCEL: CLOSED, CHECKED: CLOSED}
"""

LINES: list[dict[str, Any]] = [
    {"instance": "t1", "event_id": "e1", "type": "RESOLVE", "payload": {"note": "fixed"}},
    {"instance": "t1", "event_id": "e2", "type": "REOPEN"},
    {"instance": "t1", "event_id": "e3", "type": "CANCEL"},
]
LOG = [None, "RESOLVE", "REOPEN", "REOPEN", "CHECKED"]
"""The start's entry (no event), closed entered by RESOLVE through the eventless
`resolving`, closed exited and open entered by REOPEN, closed entered by CHECKED."""


def test_entry_reads_of_the_event_are_stored_reloaded_and_verified(
    store_url: str, tmp_path: Path
) -> None:
    chart = tmp_path / "ticket.yaml"
    chart.write_text(CHART, encoding="utf-8")
    lines = "".join(json.dumps(line) + "\n" for line in LINES)
    ran = statekit("run", str(chart), "--db", store_url, "--now", "1000", stdin=lines)
    assert ran.returncode == 0, ran.stderr
    outcomes = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [o["status"] for o in outcomes] == ["APPLIED"] * 3
    assert [o["state"] for o in outcomes] == [["closed"], ["open"], ["closed"]]
    verified = statekit("verify", "--db", store_url, "--chart", str(chart), "--format", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "t1" in verified.stdout
    chart_value = chart_from(CHART)
    stored = Runner(chart_value, open_store(store_url)).load("t1").state
    assert list(stored.context["log"]) == LOG
    state = chart_value.start()
    for line in LINES:
        payload = line.get("payload")
        event_type, event_id = str(line["type"]), str(line["event_id"])
        state = chart_value.send(state, event_type, payload, event_id=event_id).state
    assert stored == state

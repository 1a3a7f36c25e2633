"""A chart with list context, `foreach`, `if`, `_event` and `error.execution` runs through
`statekit run` on each store kind, is stored and replays clean under `statekit verify`."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import statekit
from runner_charts import chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

CHART = """
statechart: basket
on_evaluation_error: raise
context:
  skus: {type: list, items: string}
  counts: {type: list, items: integer, default: [0]}
  total: {type: integer, default: 0}
  kinds: {type: string, default: ""}
  problem: {type: string, default: ""}
events:
  ADD: {sku: string, quantities: {type: list, items: integer}}
  SPLIT: {parts: integer}
  FULL: {}
initial: open
states:
  open:
    on:
      ADD:
        do:
          - assign: {skus: "[event.sku]", kinds: "ctx.kinds + _event.type + ';'"}
          - foreach:
              array: event.quantities
              item: q
              index: i
              do: [{assign: {total: ctx.total + q, counts: "[i, q]"}}]
          - if: {cond: ctx.total > 10, then: [{raise: FULL}]}
      SPLIT: {do: [{assign: {total: ctx.total // event.parts}}]}
      FULL: {to: full, do: [{assign: {kinds: "ctx.kinds + _event.type + ';'"}}]}
      error.execution: {do: [{assign: {problem: event.reason}}]}
  full:
    on:
      SPLIT: {do: [{assign: {total: ctx.total // event.parts}}]}
      error.execution: {do: [{assign: {problem: event.reason}}]}
    reject: {ADD: FULL, FULL: FULL}
"""

LINES = [
    {
        "instance": "b1",
        "event_id": "e1",
        "type": "ADD",
        "payload": {"sku": "a", "quantities": [2, 3]},
    },
    {"instance": "b1", "event_id": "e2", "type": "SPLIT", "payload": {"parts": 0}},
    {"instance": "b1", "event_id": "e3", "type": "ADD", "payload": {"sku": "b", "quantities": [9]}},
    {
        "instance": "b1",
        "event_id": "e4",
        "type": "ADD",
        "payload": {"sku": "c", "quantities": ["x"]},
    },
]


def test_a_chart_with_lists_runs_stores_and_verifies(store_url: str, tmp_path: Path) -> None:
    chart = tmp_path / "basket.yaml"
    chart.write_text(CHART, encoding="utf-8")
    lines = "".join(json.dumps(line) + "\n" for line in LINES)
    ran = statekit("run", str(chart), "--db", store_url, "--now", "1000", stdin=lines)
    assert ran.returncode == 0, ran.stderr
    outcomes = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [o["status"] for o in outcomes] == ["APPLIED", "APPLIED", "APPLIED", "REJECTED"]
    assert outcomes[2]["state"] == ["full"]
    assert outcomes[3]["reason"] == "INVALID_PAYLOAD"
    verified = statekit("verify", "--db", store_url, "--chart", str(chart), "--format", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = json.loads(verified.stdout)
    assert "b1" in json.dumps(report)
    runner = Runner(chart_from(CHART), open_store(store_url))
    context = runner.load("b1").state.context
    assert (context["skus"], context["counts"], context["total"]) == (["b"], [0, 9], 14)
    assert context["kinds"] == "external;external;internal;"
    assert context["problem"].startswith("assign to ctx.total `ctx.total // event.parts`")

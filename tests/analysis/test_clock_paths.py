"""The analysis treats `now` as an input that only grows: a guard over the clock branches
both ways, and the paths printed with checked payloads carry clock readings that never
decrease and that `Chart.send` replays along the printed path."""

from __future__ import annotations

from typing import Any

from chart_helpers import chart_of

from statekit.analysis.clock_readings import NOW_KEY, START_MS
from statekit.analysis.explain import explain
from statekit.analysis.explain_payloads import explanation_json
from statekit.analysis.explorer import explore
from statekit.analysis.witness import PathReplays
from statekit.engine.chart import Chart

TICKET = """
statechart: ticket
context:
  opened_at: {type: integer, default: 0}
  reopened: {type: boolean, default: false}
events:
  OPEN: {}
  REPLY: {urgent: boolean}
  REOPEN: {}
initial: new
states:
  new:
    on:
      OPEN: {to: open, do: [{assign: {opened_at: now}}]}
  open:
    on:
      REPLY:
        - {to: met, if: now - ctx.opened_at <= 4h and not event.urgent}
        - {to: escalated, if: event.urgent}
        - {to: breached}
  escalated:
    on:
      REOPEN: {to: open, if: now - ctx.opened_at > 1d, do: [{assign: {reopened: true}}]}
  met: {final: true}
  breached: {final: true}
"""


def _replayed(chart: Chart, events: list[dict[str, Any]]) -> tuple[list[int], frozenset[str]]:
    """The clock readings of a printed path and the leaves it ends in, every step sent
    through `Chart.send` with its reading and checked to apply."""
    state = chart.start(now_ms=START_MS)
    readings = [START_MS]
    for step in events:
        payload = dict(step["payload"])
        now = payload.pop(NOW_KEY)
        readings.append(now)
        result = chart.send(state, step["event"], payload, now_ms=now)
        assert result.status.value == "APPLIED", (step, result.reason, result.message)
        state = result.state
    return readings, frozenset(state.leaves)


def test_guards_over_now_branch_both_ways_and_printed_paths_replay() -> None:
    ir = chart_of(TICKET)
    exploration = explore(ir)
    document = explanation_json(explain(exploration), PathReplays(exploration))
    chart = Chart(ir)
    reached: set[frozenset[str]] = set()
    for row in document["configurations"]:
        path = row["path"]
        assert all(step["payload"] is not None for step in path), row
        readings, leaves = _replayed(chart, path)
        assert readings == sorted(readings), readings  # the clock never goes back
        assert leaves == frozenset(row["states"])
        reached.add(leaves)
    # both outcomes of `now - ctx.opened_at <= 4h`, and the reopening a day later
    assert {frozenset({"met"}), frozenset({"breached"}), frozenset({"escalated"})} <= reached
    breached = next(r for r in document["configurations"] if r["states"] == ["breached"])
    opened, replied = (step["payload"][NOW_KEY] for step in breached["path"][-2:])
    assert replied - opened > 4 * 3_600_000


def test_the_answers_of_explain_replay_with_their_clock_readings() -> None:
    ir = chart_of(TICKET)
    exploration = explore(ir)
    document = explanation_json(explain(exploration), PathReplays(exploration))
    chart = Chart(ir)
    checked = 0
    for row in document["configurations"]:
        readings, _leaves = _replayed(chart, row["path"])
        state = chart.start(now_ms=START_MS)
        for step in row["path"]:
            payload = dict(step["payload"])
            state = chart.send(state, step["event"], payload, now_ms=payload.pop(NOW_KEY)).state
        for event, verdicts in row["events"].items():
            for verdict in verdicts:
                if verdict["payload"] is None or "path" in verdict:
                    continue
                payload = dict(verdict["payload"])
                now = payload.pop(NOW_KEY)
                assert now >= readings[-1]
                result = chart.send(state, event, payload, now_ms=now)
                assert (result.status.value, result.reason) == (
                    verdict["status"],
                    verdict["reason"],
                ), (row["states"], event, verdict)
                checked += 1
    assert checked >= 6


HOLD = """
statechart: hold
context:
  held_at: {type: integer, default: 0}
  waited: {type: integer, default: 0}
events:
  HOLD: {}
initial: free
states:
  free:
    on:
      HOLD: {to: held, do: [{assign: {held_at: now}}]}
  held:
    after:
      2h: {to: released, do: [{assign: {waited: now - ctx.held_at}}]}
  released: {final: true}
"""


def test_a_timers_delivery_is_replayed_at_or_after_its_due_time() -> None:
    ir = chart_of(HOLD)
    exploration = explore(ir)
    document = explanation_json(explain(exploration), PathReplays(exploration))
    (row,) = [r for r in document["configurations"] if r["states"] == ["released"]]
    held, released = (step["payload"][NOW_KEY] for step in row["path"])
    assert released - held >= 2 * 3_600_000
    readings, leaves = _replayed(Chart(ir), row["path"])
    assert leaves == frozenset({"released"}) and readings == sorted(readings)

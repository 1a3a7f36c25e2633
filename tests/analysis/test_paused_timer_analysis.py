"""The analysis and a paused timer: a state that pauses its ancestor's named timer on
entry, with no `resume:` of it but on its own exit, keeps the timer from being
delivered while it is active; `explain` (text and JSON) and `lint` through the real
command line show the timer's transition as not firable there. Any other use of
`resume:` keeps the over-approximation (the timer deliverable wherever its state is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit

FOREVER = """\
statechart: hold
version: 1
description: An order whose SLA stops for good once it is on hold.
events: {HOLD: {}}
initial: open
states:
  open:
    after: [{id: sla, delay: 1h, to: breached}]
    initial: active
    states:
      active: {on: {HOLD: on_hold}}
      on_hold:
        entry: [{pause: sla}]
        already: [HOLD]
  breached: {final: true, reject: {HOLD: CLOSED}}
"""
SLA = "after(sla)@open"
RESUMED_BY_AN_EVENT = (
    FOREVER.replace("events: {HOLD: {}}", "events: {HOLD: {}, GO: {}}")
    .replace(
        "        already: [HOLD]\n",
        "        already: [HOLD]\n        on: {GO: {do: [{resume: sla}]}}\n",
    )
    .replace("reject: {HOLD: CLOSED}", "reject: {HOLD: CLOSED, GO: CLOSED}")
    .replace("active: {on: {HOLD: on_hold}}", "active: {on: {HOLD: on_hold}, already: [GO]}")
)


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "hold.yaml"
    path.write_text(text)
    return str(path)


def test_explain_shows_the_paused_timer_not_firable_where_it_is_paused(tmp_path: Path) -> None:
    done = statekit("explain", _write(tmp_path, FOREVER), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = {tuple(r["states"]): r for r in data["configurations"]}
    assert rows[("open.active",)]["timers"] == [SLA]
    assert SLA in rows[("open.active",)]["events"]
    assert rows[("open.on_hold",)]["timers"] == []
    assert SLA not in rows[("open.on_hold",)]["events"]
    (timer,) = data["timers"]
    assert timer["paused_in"] == ["open.on_hold"]
    assert timer["controls"] == ["pause on entry of 'open.on_hold' (line 13)"]
    text = statekit("explain", _write(tmp_path, FOREVER)).stdout
    assert "    pause on entry of 'open.on_hold' (line 13)\n" in text
    assert "    paused (not delivered) while 'open.on_hold' is active\n" in text


def test_lint_finds_the_state_that_pauses_its_timer_for_good_dead(tmp_path: Path) -> None:
    done = statekit("lint", _write(tmp_path, FOREVER), "--format", "json")
    found = {(d["slug"], d["line"]) for d in json.loads(done.stdout)["diagnostics"]}
    assert ("dead-state", 12) in found, done.stdout


@pytest.mark.parametrize("text", [RESUMED_BY_AN_EVENT], ids=["resumed-by-an-event"])
def test_any_other_resume_leaves_the_timer_deliverable(tmp_path: Path, text: str) -> None:
    done = statekit("explain", _write(tmp_path, text), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = {tuple(r["states"]): r for r in data["configurations"]}
    assert rows[("open.on_hold",)]["timers"] == [SLA]
    (timer,) = data["timers"]
    assert timer["paused_in"] == []
    lint = statekit("lint", _write(tmp_path, text), "--format", "json")
    assert "dead-state" not in {d["slug"] for d in json.loads(lint.stdout)["diagnostics"]}

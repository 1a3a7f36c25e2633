"""`instance.processors`: the record of the event processors an instance is reached by
(SCXML's `_ioprocessors`), `{scxml: {location: '#_scxml_<instance ID>'}}`, read where
`instance.id` is; typed as that record, so a field it lacks and any assignment to it are
compile errors at their position; the runner's replay and `verify` give every step the
same; lint takes it as an unknown value; the location it gives is an address that
reaches the instance itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from statekit.api import load
from statekit.compiler.diagnostics import CompileError
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import Simulator

RECORD = "{type: record, fields: {scxml: {type: record, fields: {location: string}}}}"
CHART = f"""
statechart: located
description: Keeps where it is reached, and sends itself a note there.
context:
  kept: {RECORD[:-1]}, nullable: true}}
  where: {{type: string, default: ""}}
  notes: {{type: integer, default: 0}}
events:
  LOOK: {{}}
  NOTE: {{}}
initial: open
states:
  open:
    on:
      LOOK:
        - if: "instance.processors.scxml.location == '#_scxml_' + instance.id"
          do:
            - assign: {{kept: instance.processors, where: instance.processors.scxml.location}}
            - send: {{event: NOTE, to: {{address: instance.processors.scxml.location}}}}
      NOTE:
        - if: "ctx.kept == instance.processors"
          to: noted
          do: [{{assign: {{notes: ctx.notes + 1}}}}]
  noted: {{final: true}}
"""


def _chart(tmp_path: Path, text: str = CHART) -> Chart:
    path = tmp_path / "located.yaml"
    path.write_text(text, encoding="utf-8")
    return load(path)


def test_it_is_the_record_of_the_instances_own_location(tmp_path: Path) -> None:
    sim = Simulator(_chart(tmp_path), instance_id="loc-1")
    sim.send("LOOK")
    context = sim.state.context
    assert context["where"] == "#_scxml_loc-1"
    assert context["kept"] == {"scxml": {"location": "#_scxml_loc-1"}}
    assert context["notes"] == 1 and sim.state.is_active("noted")  # its address reached it


def test_the_runner_gives_every_step_and_its_replay_the_same(tmp_path: Path) -> None:
    runner = Runner(_chart(tmp_path), open_store(f"sqlite:///{tmp_path / 'db.sqlite'}"))
    runner.create("loc-2")
    assert runner.apply("loc-2", "e1", "LOOK").status.value == "APPLIED"
    state = runner.load("loc-2").state
    assert state.context["kept"] == {"scxml": {"location": "#_scxml_loc-2"}}
    assert state.context["notes"] == 1
    assert runner.verify("loc-2").ok


GUARD = "\"instance.processors.scxml.location == '#_scxml_' + instance.id\""


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('"instance.processors.http"', "has no field 'http'"),
        ('"instance.processors + 1"', "record"),
        ('"instance.processor"', "instance.processors"),
    ],
)
def test_the_compiler_types_it(tmp_path: Path, source: str, message: str) -> None:
    text = CHART.replace(GUARD, source)
    assert text != CHART
    with pytest.raises(CompileError) as caught:
        _chart(tmp_path, text)
    (first, *_) = caught.value.diagnostics
    assert message in first.message and first.span.line == 16, first


def test_nothing_assigns_it(tmp_path: Path) -> None:
    text = CHART.replace(
        "- assign: {kept: instance.processors,", "- assign: {instance.processors: ctx.kept,"
    )
    assert text != CHART
    with pytest.raises(CompileError) as caught:
        _chart(tmp_path, text)
    (first, *_) = caught.value.diagnostics
    assert "unknown context field" in first.message and first.span.line == 18, first


def test_lint_takes_it_as_an_unknown_value(tmp_path: Path) -> None:
    _chart(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "statekit", "lint", str(tmp_path / "located.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr

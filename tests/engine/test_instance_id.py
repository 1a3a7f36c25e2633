"""`instance.id` in expressions: the ID of the instance a step is given (`Chart.send(...,
instance_id=)`), the Simulator's and the FamilySimulator's members' own; a step of a chart
that reads it without one fails as any expression does; the compiler types it a string and
refuses anything else of `instance`; the analysis takes it as any string."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from statekit.api import load
from statekit.compiler.diagnostics import CompileError
from statekit.engine.chart import Chart, StartError
from statekit.engine.result import Status
from statekit.testing import FamilySimulator, Simulator

CHART = """
statechart: tagged
context:
  tag: {type: string, default: ""}
events:
  CHECK: {expected: string}
initial: open
states:
  open:
    entry:
      - assign: {tag: "'#' + instance.id"}
    on:
      CHECK:
        - {to: mine, if: "instance.id == event.expected"}
        - {to: other}
  mine: {final: true}
  other: {final: true}
"""


def _chart(tmp_path: Path, text: str = CHART, name: str = "tagged") -> Chart:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return load(path)


def test_each_step_reads_the_instance_id_it_is_given(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    start = chart.start(instance_id="t-1")
    assert start.context["tag"] == "#t-1"
    same = chart.send(start, "CHECK", {"expected": "t-1"}, instance_id="t-1")
    other = chart.send(start, "CHECK", {"expected": "t-1"}, instance_id="t-2")
    assert same.state.is_active("mine") and other.state.is_active("other")


def test_a_step_given_no_instance_id_fails_as_an_expression_does(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    with pytest.raises(StartError, match=r"instance\.id"):
        chart.start()
    result = chart.send(chart.start(instance_id="t-1"), "CHECK", {"expected": "t-1"})
    assert (result.status, result.reason) == (Status.REJECTED, "EVALUATION_ERROR")
    assert "instance ID" in (result.message or "")


def test_a_chart_that_opts_in_raises_error_execution_instead(tmp_path: Path) -> None:
    # the failing guard is false (SCXML): `other` is taken, and error.execution follows
    text = CHART.replace("statechart: tagged\n", "statechart: tagged\non_evaluation_error: raise\n")
    text = text.replace(
        "  other: {final: true}\n",
        "  other: {on: {error.execution: failed}}\n  failed: {final: true}\n",
    )
    chart = _chart(tmp_path, text)
    result = chart.send(chart.start(instance_id="t-1"), "CHECK", {"expected": "t-1"})
    assert result.status is Status.APPLIED and result.state.is_active("failed")


def test_replay_gives_every_step_the_same_instance_id(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    replayed = chart.replay([("CHECK", {"expected": "t-9"})], instance_id="t-9")
    assert replayed.ok and replayed.state.is_active("mine")


def test_the_simulator_steps_as_its_instance(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    named = Simulator(chart, instance_id="s-7")
    assert named.state.context["tag"] == "#s-7"
    named.send("CHECK", {"expected": "s-7"})
    assert named.state.is_active("mine")
    assert Simulator(chart).state.context["tag"] == "#simulated"


CHILD = """
statechart: child
context:
  me: {type: string, default: ""}
initial: running
states:
  running:
    entry: [{assign: {me: instance.id}}]
"""
PARENT = """
statechart: parent
context:
  me: {type: string, default: ""}
initial: waiting
states:
  waiting:
    entry: [{assign: {me: instance.id}}]
    invoke: [{id: helper, chart: child}]
"""


def test_each_member_of_a_family_reads_its_own_id(tmp_path: Path) -> None:
    charts = [_chart(tmp_path, PARENT, "parent"), _chart(tmp_path, CHILD, "child")]
    family = FamilySimulator(charts)
    family.start("parent", "p-1")
    (child,) = [m for m in family.members if m != "p-1"]
    assert family.member("p-1").state.context["me"] == "p-1"
    assert family.member(child).state.context["me"] == child


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("instance.name", "only allowed as instance.id"),
        ("instance.id + 1", "got string and integer"),
        ("instance", "name 'instance' is not allowed"),
    ],
)
def test_the_compiler_types_it_and_refuses_the_rest_of_instance(
    tmp_path: Path, expression: str, message: str
) -> None:
    text = CHART.replace("\"'#' + instance.id\"", f'"{expression}"')
    with pytest.raises(CompileError) as caught:
        _chart(tmp_path, text)
    (first, *_) = caught.value.diagnostics
    assert message in first.message and first.span.line == 11


def test_the_analysis_takes_it_as_any_string(tmp_path: Path) -> None:
    (tmp_path / "tagged.yaml").write_text(CHART, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "statekit", "lint", str(tmp_path / "tagged.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "unreachable" not in run.stdout  # both CHECK alternatives can be taken


def test_the_analysis_replays_paths_through_steps_that_read_it(tmp_path: Path) -> None:
    """A replayed step reads an instance ID (any one stands for all), so explain finds the
    payloads of the steps that read it instead of assuming them."""
    (tmp_path / "tagged.yaml").write_text(CHART, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "statekit", "explain", str(tmp_path / "tagged.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert 'CHECK: → other (payload {"expected": ' in run.stdout, run.stdout

"""`--statekit-cov` over a run split by pytest-xdist (`-n 2`): each worker records its own
tests and the controller reports on all of them. The suites below are run on every
worker (`--dist each`) and send what they send by worker, so that only the merged
recordings of both workers reach the numbers asserted."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from coverage_charts import DOOR

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.testing.coverage.recorder import Recorder
from statekit.testing.coverage.workers import merge, recordings

# gw0 opens and closes the door; gw1 locks it and tries to open it (LOCKED) and sends
# an unknown event; neither covers every transition or reason alone.
BY_WORKER = """
import os
import statekit

def test_by_worker():
    door = statekit.load("charts/door.yaml")
    worker = os.environ["PYTEST_XDIST_WORKER"]
    if worker == "gw0":
        opened = door.send(door.start(), "OPEN")
        assert door.send(opened.state, "CLOSE").applied
    else:
        locked = door.send(door.start(), "LOCK")
        assert door.send(locked.state, "OPEN").reason == "LOCKED"
        assert door.send(door.start(), "KNOCK").reason == "UNKNOWN_EVENT"
"""


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makepyfile(test_by_worker=BY_WORKER)
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "each", "-p", "no:cacheprovider", *args,
        "--statekit-cov-report=json:cov.json", "--statekit-cov-report=term",
    )  # fmt: skip
    return result, json.loads((pytester.path / "cov.json").read_text())


@pytest.mark.parametrize("where", ["--statekit-cov=charts", "--statekit-cov"])
def test_the_workers_recordings_are_merged(pytester: pytest.Pytester, where: str) -> None:
    result, report = _run(pytester, where)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*statekit coverage*", "door*3/3 100.0%*"])
    door = report["charts"]["door"]
    assert door["loaded"] is True
    assert (door["transition"]["covered"], door["transition"]["total"]) == (3, 3)
    assert [m["reason"] for m in door["rejection"]["missing"]] == [
        "DOOR_OPEN",
        "INVALID_PAYLOAD",
        "UNDEFINED_TRANSITION",
    ]


def test_a_bound_is_checked_on_the_merged_numbers(pytester: pytest.Pytester) -> None:
    result, _ = _run(pytester, "--statekit-cov=charts", "--statekit-cov-fail-under=transition:100")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["statekit coverage reached every bound (transition 100%)"])


def test_recordings_survive_the_trip_and_add_up() -> None:
    compiled = compile_source(textwrap.dedent(DOOR), "door.yaml").chart
    assert compiled is not None
    door = Chart(compiled, source=textwrap.dedent(DOOR))
    first, second, controller = Recorder(), Recorder(), Recorder()
    first(door, door.start(), door.send(door.start(), "OPEN"), None)
    locked = door.send(door.start(), "LOCK")
    second(door, door.start(), locked, None)
    second(door, locked.state, door.send(locked.state, "OPEN"), None)
    assert merge(controller, recordings(first)) == []
    assert merge(controller, recordings(second)) == []
    (record,) = controller.charts.values()
    assert record.chart.digest == door.digest
    assert record.transitions == {0, 1} and record.reasons == {"LOCKED"}
    assert record.events == 3
    assert record.pairs == {(door.start().active_ids, "OPEN"), (door.start().active_ids, "LOCK"),
                            (locked.state.active_ids, "OPEN")}  # fmt: skip
    assert recordings(controller) == recordings(controller)  # stable text


def test_a_chart_that_cannot_be_compiled_again_is_named() -> None:
    compiled = compile_source(textwrap.dedent(DOOR), "gone.yaml").chart
    assert compiled is not None
    door = Chart(compiled)  # made from an IR in memory: no text, no file
    worker, controller = Recorder(), Recorder()
    worker(door, door.start(), door.send(door.start(), "OPEN"), None)
    assert merge(controller, recordings(worker)) == [
        "gone.yaml: recorded by a worker but not measured: it cannot be compiled again to "
        "the same chart"
    ]
    assert controller.charts == {}
    assert merge(controller, recordings(worker), {door.digest: compiled}) == []
    assert controller.charts[door.digest].transitions == {0}

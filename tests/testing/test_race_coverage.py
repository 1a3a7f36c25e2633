"""Race coverage: a race of the analysis counts when both its orders were delivered from
its configuration, one event right after the other (through `Chart.send` or the runner)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

# In-process inner runs share the outer statekit modules (see test_coverage_plugin.py).
import statekit.api
import statekit.runner.runner
import statekit.testing.coverage.report

assert statekit.api and statekit.runner.runner and statekit.testing.coverage.report

# The lesson's race: completion and cancellation both sent while running. Ping and
# TaskCompleted are order-sensitive too, but of one producer (they arrive in its order): not
# a race; Ping and CancellationRequested are one.
LESSON = """
statechart: lesson
version: 1
initial: running
producers:
  worker: [TaskCompleted, Ping]
  user: [CancellationRequested]
events: {TaskCompleted: {}, CancellationRequested: {}, Ping: {}}
states:
  running:
    on:
      TaskCompleted: completed
      CancellationRequested: cancelled
      Ping: {}
  completed: {final: true}
  cancelled: {final: true}
"""

ONE_ORDER = """
import statekit

def test_completion_first():
    chart = statekit.load("charts/lesson.yaml")
    done = chart.send(chart.start(), "TaskCompleted")
    assert chart.send(done.state, "CancellationRequested").reason == "TERMINAL_STATE"
"""

NOT_ADJACENT = """
import statekit

def test_a_ping_in_between():
    chart = statekit.load("charts/lesson.yaml")
    cancelled = chart.send(chart.start(), "CancellationRequested")
    pinged = chart.send(cancelled.state, "Ping")
    assert chart.send(pinged.state, "TaskCompleted").reason == "TERMINAL_STATE"
"""

OTHER_ORDER_BY_RUNNER = """
import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

def test_cancellation_first_through_the_runner(tmp_path):
    runner = Runner(statekit.load("charts/lesson.yaml"), open_store(f"sqlite:///{tmp_path}/l.db"))
    runner.create("t1")
    runner.apply("t1", "e1", "CancellationRequested")
    assert runner.apply("t1", "e2", "TaskCompleted").reason == "TERMINAL_STATE"
"""

OTHER_ORDER_BY_SEND = """
import statekit

def test_cancellation_first():
    chart = statekit.load("charts/lesson.yaml")
    cancelled = chart.send(chart.start(), "CancellationRequested")
    assert chart.send(cancelled.state, "TaskCompleted").reason == "TERMINAL_STATE"
"""


def _race(pytester: pytest.Pytester, **suites: str) -> dict[str, Any]:
    pytester.makefile(".yaml", **{"charts/lesson": textwrap.dedent(LESSON)})
    pytester.makepyfile(**suites)
    result = pytester.runpytest("--statekit-cov=charts", "--statekit-cov-report=json:cov.json")
    assert result.ret == 0, result.stdout.str()
    race: dict[str, Any] = json.loads((pytester.path / "cov.json").read_text())["charts"]["lesson"][
        "race"
    ]
    return race


def test_one_order_leaves_the_race_uncovered_and_names_the_other(
    pytester: pytest.Pytester,
) -> None:
    race = _race(pytester, test_one=ONE_ORDER)
    assert (race["covered"], race["total"]) == (0, 2)
    lesson, ping = race["missing"]
    assert lesson["events"] == ["TaskCompleted", "CancellationRequested"]
    assert lesson["configuration"] == ["running"] and lesson["path"] == []
    assert lesson["untried"] == ["CancellationRequested then TaskCompleted"]
    assert ping["events"] == ["CancellationRequested", "Ping"]
    assert ping["untried"] == ["CancellationRequested then Ping", "Ping then CancellationRequested"]


def test_an_event_in_between_is_not_the_race(pytester: pytest.Pytester) -> None:
    race = _race(pytester, test_one=ONE_ORDER, test_later=NOT_ADJACENT)
    assert race["covered"] == 0
    lesson, ping = race["missing"]
    assert lesson["untried"] == ["CancellationRequested then TaskCompleted"]
    assert ping["untried"] == ["Ping then CancellationRequested"]


@pytest.mark.parametrize("other", [OTHER_ORDER_BY_SEND, OTHER_ORDER_BY_RUNNER])
def test_both_orders_cover_the_race(pytester: pytest.Pytester, other: str) -> None:
    race = _race(pytester, test_one=ONE_ORDER, test_other=other)
    assert (race["covered"], race["total"]) == (1, 2)
    assert [m["events"] for m in race["missing"]] == [["CancellationRequested", "Ping"]]


def test_fail_under_race(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"charts/lesson": textwrap.dedent(LESSON)})
    pytester.makepyfile(test_plugin_one=ONE_ORDER)
    result = pytester.runpytest("--statekit-cov=charts", "--statekit-cov-fail-under=race:100")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["  lesson: race coverage 0.0% is below 100%"])


REUSED_INSTANCE_ID = """
import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

def test_first_store(tmp_path):
    runner = Runner(statekit.load("charts/lesson.yaml"), open_store(f"sqlite:///{tmp_path}/a.db"))
    runner.create("t1")
    runner.apply("t1", "e1", "CancellationRequested")

def test_second_store(tmp_path):
    runner = Runner(statekit.load("charts/lesson.yaml"), open_store(f"sqlite:///{tmp_path}/b.db"))
    runner.create("t1")
    runner.apply("t1", "e1", "TaskCompleted")
"""


def test_an_instance_id_reused_in_another_store_is_another_history(
    pytester: pytest.Pytester,
) -> None:
    race = _race(pytester, test_one=ONE_ORDER, test_reused=REUSED_INSTANCE_ID)
    assert race["covered"] == 0

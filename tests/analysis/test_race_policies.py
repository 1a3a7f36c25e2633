"""The lesson's race under both explicit policies: completion wins, cancellation wins.

The same race (TaskCompleted from the worker, TaskCancelled from the user, both sent
against the running task) is decided by two charts. Each policy gives one answer
whatever the order (deterministic), and the two policies give different answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import statekit
from statekit.analysis.races import find_races
from statekit.engine.chart import Chart
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_paths

FIXTURES = Path(__file__).parent / "fixtures" / "races"
MACHINES = Path(__file__).resolve().parents[2] / "machines"
POLICIES = {"completion_wins": ("completed",), "cancellation_wins": ("cancelled",)}
ORDERS = (("TaskCompleted", "TaskCancelled"), ("TaskCancelled", "TaskCompleted"))


def deliver(chart: Chart, events: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Send `events` from the start; each event's answer, and the active leaves at the end."""
    state = chart.start()
    answers = []
    for event in events:
        result = chart.send(state, event)
        answers.append(f"{event} {result.status.value} {result.reason or ''}".strip())
        state = result.state
    return tuple(answers), state.leaves


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_each_policy_gives_one_answer_whatever_the_order(policy: str) -> None:
    chart = statekit.load(FIXTURES / f"{policy}.yaml")
    ends = set()
    for order in ORDERS:
        assert deliver(chart, order) == deliver(chart, order)  # deterministic
        # then the reconciler reports, as it does after any cancellation
        _, end = deliver(chart, (*order, "EffectsReconciled"))
        ends.add(end)
    assert ends == {POLICIES[policy]}


def test_the_two_policies_answer_the_same_race_differently() -> None:
    answers = {
        policy: {
            order: deliver(statekit.load(FIXTURES / f"{policy}.yaml"), order) for order in ORDERS
        }
        for policy in POLICIES
    }
    assert answers["completion_wins"] == {
        ORDERS[0]: (
            ("TaskCompleted APPLIED", "TaskCancelled REJECTED TASK_COMPLETED"),
            ("completed",),
        ),
        ORDERS[1]: (("TaskCancelled APPLIED", "TaskCompleted APPLIED"), ("completed",)),
    }
    assert answers["cancellation_wins"] == {
        ORDERS[0]: (("TaskCompleted APPLIED", "TaskCancelled APPLIED"), ("cancelling",)),
        ORDERS[1]: (
            ("TaskCancelled APPLIED", "TaskCompleted REJECTED CANCELLATION_WINS"),
            ("cancelling",),
        ),
    }


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_the_analysis_finds_the_race_decided_with_one_end(policy: str) -> None:
    """Still a race (an event is answered differently), decided, and both orders end alike."""
    report = find_races(statekit.load(FIXTURES / f"{policy}.yaml").ir)
    (race,) = [
        r
        for r in report.races
        if r.events == ("TaskCompleted", "TaskCancelled") and r.configuration == ("running",)
    ]
    assert race.decision is not None and race.decision.name == "complete_vs_cancel"
    first, second = race.orders
    assert first.configuration == second.configuration
    assert report.undecided == ()
    assert report.unmatched == ()


def test_both_policy_charts_lint_clean() -> None:
    report = lint_paths(sorted(FIXTURES.glob("*.yaml")), LintConfig())
    assert report.diagnostics == ()


def test_the_task_machine_decides_every_race_the_lessons_among_them() -> None:
    report = find_races(statekit.load(MACHINES / "task.yaml").ir)
    assert report.complete and report.races
    assert report.undecided == () and report.unmatched == ()
    # every declared event has its producer; a timer event has none (the clock sends it)
    timers = {t.name for t in statekit.load(MACHINES / "task.yaml").ir.timers}
    for race in report.races:
        for event, producer in zip(race.events, race.producers, strict=True):
            assert (producer is None) == (event in timers), (race.events, race.producers)
    assert any(set(race.events) & timers for race in report.races)
    (race,) = [
        r
        for r in report.races
        if r.events == ("TaskCompleted", "TaskCancelled")
        and r.configuration == ("lifecycle.running", "cancellation.none", "artifact.verified")
    ]
    assert race.decision is not None and race.decision.name == "complete_vs_cancel"
    assert [o.text() for o in race.orders] == [
        "TaskCompleted APPLIED, then TaskCancelled REJECTED TASK_COMPLETED → "
        "{lifecycle.completed, cancellation.not_needed, artifact.verified}",
        "TaskCancelled APPLIED, then TaskCompleted REJECTED CANCELLATION_IN_PROGRESS → "
        "{lifecycle.cancelling, cancellation.requested, artifact.verified}",
    ]

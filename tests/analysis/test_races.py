"""The race search on small charts whose answers are known by hand."""

from __future__ import annotations

from analysis_charts import chart_of

from statekit.analysis.races import find_races

REGIONS = """
statechart: regions
version: 1
parallel: true
events: {A: {}, B: {}}
states:
  left:
    initial: a0
    states:
      a0: {on: {A: a1}}
      a1: {reject: {A: DONE_A}}
  right:
    initial: b0
    states:
      b0: {on: {B: b1}}
      b1: {reject: {B: DONE_B}}
"""

LESSON = """
statechart: lesson
version: 1
initial: running
events: {TaskCompleted: {}, CancellationRequested: {}}
states:
  running:
    on:
      TaskCompleted: completed
      CancellationRequested: cancelled
  completed: {final: true}
  cancelled: {final: true}
"""


def test_events_of_independent_regions_commute() -> None:
    assert find_races(chart_of(REGIONS)).races == ()


def test_the_lessons_complete_versus_cancel_pair_is_a_race() -> None:
    report = find_races(chart_of(LESSON))
    assert [(r.events, r.configuration) for r in report.races] == [
        (("TaskCompleted", "CancellationRequested"), ("running",))
    ]
    race = report.races[0]
    first, second = race.orders
    assert (first.first.text(), first.second.text(), first.configuration) == (
        "TaskCompleted APPLIED",
        "CancellationRequested REJECTED TERMINAL_STATE",
        ("completed",),
    )
    assert (second.first.text(), second.second.text(), second.configuration) == (
        "CancellationRequested APPLIED",
        "TaskCompleted REJECTED TERMINAL_STATE",
        ("cancelled",),
    )
    assert not race.decided
    assert report.complete

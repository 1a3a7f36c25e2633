"""The race search on small charts whose answers are known by hand, and its two rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_charts import chart_of, findings
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.analysis.options import ExplorationOptions
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
{extra}
states:
  running:
    on:
      TaskCompleted: completed
      CancellationRequested: cancelled
  completed: {final: true}
  cancelled: {final: true}
"""


def lesson(extra: str = "") -> str:
    return LESSON.replace("{extra}", extra)


def test_events_of_independent_regions_commute() -> None:
    assert find_races(chart_of(REGIONS)).races == ()


def test_guarded_events_of_independent_regions_commute() -> None:
    """Data guards are taken both ways in both orders: the outcome sets agree."""
    guarded = REGIONS.replace("events: {A: {}, B: {}}", "events: {A: {n: integer}, B: {}}")
    guarded = guarded.replace(
        "a0: {on: {A: a1}}", "a0: {on: {A: {to: a1, if: event.n > 0, else: NOT_POSITIVE}}}"
    )
    assert find_races(chart_of(guarded)).races == ()


def test_the_lessons_complete_versus_cancel_pair_is_a_race() -> None:
    report = find_races(chart_of(lesson()))
    assert [(r.events, r.configuration) for r in report.races] == [
        (("TaskCompleted", "CancellationRequested"), ("running",))
    ]
    race = report.races[0]
    first, second = race.orders
    assert first.order == ("TaskCompleted", "CancellationRequested")
    assert first.text() == (
        "TaskCompleted APPLIED, then CancellationRequested REJECTED TERMINAL_STATE → {completed}"
    )
    assert second.text() == (
        "CancellationRequested APPLIED, then TaskCompleted REJECTED TERMINAL_STATE → {cancelled}"
    )
    assert first.classification("CancellationRequested").reason == "TERMINAL_STATE"
    assert (race.path, race.producers, race.assumptions) == ((), (None, None), ())
    assert not race.decided
    assert report.complete
    assert report.undecided == report.races


def test_a_pair_of_one_producer_is_not_a_race() -> None:
    one = "producers: {worker: [TaskCompleted, CancellationRequested]}"
    assert find_races(chart_of(lesson(one))).races == ()
    two = "producers: {worker: [TaskCompleted], user: [CancellationRequested]}"
    (race,) = find_races(chart_of(lesson(two))).races
    assert race.producers == ("worker", "user")


def test_an_event_of_two_producers_races_with_either() -> None:
    both = "producers: {worker: [TaskCompleted, CancellationRequested], user: [TaskCompleted]}"
    (race,) = find_races(chart_of(lesson(both))).races
    assert race.producers == (None, "worker")


def test_only_events_that_fire_can_race_and_a_changed_reason_counts() -> None:
    """A rejected in the start but applied after B: the answer to A depends on the order;
    two rejections with different reasons after B are a race too."""
    text = """
    statechart: reasons
    events: {A: {}, B: {}}
    initial: s0
    states:
      s0: {on: {B: s1}, reject: {A: TOO_EARLY}}
      s1: {reject: {A: TOO_LATE, B: DONE}}
    """
    (race,) = find_races(chart_of(text)).races
    assert [o.text() for o in race.orders] == [
        "A REJECTED TOO_EARLY, then B APPLIED → {s1}",
        "B APPLIED, then A REJECTED TOO_LATE → {s1}",
    ]


def test_a_race_under_a_data_guard_names_its_assumption() -> None:
    text = """
    statechart: guarded
    events: {A: {ok: boolean}, B: {}}
    initial: s0
    states:
      s0: {on: {A: {to: s1, if: event.ok, else: NOT_OK}, B: s2}}
      s1: {reject: {A: DONE, B: DONE}}
      s2: {reject: {A: DONE, B: DONE}}
    """
    (race,) = find_races(chart_of(text)).races
    assert race.orders[0].text() == "A APPLIED, then B REJECTED DONE → {s1}"
    assert [a.holds for a in race.assumptions] == [True]
    assert len(race.alternatives[0]) == 2  # A holds / A fails, each then B


def test_a_decision_with_in_decides_only_where_that_state_is_active() -> None:
    text = """
    statechart: two_places
    events: {A: {}, B: {}, NEXT: {}}
    producers: {x: [A], y: [B], z: [NEXT]}
    races:
      early: {events: [B, A], in: first, decision: A wins early.}
    initial: first
    states:
      first:
        initial: f0
        on: {NEXT: second}
        states:
          f0: {on: {A: f1, B: f2}}
          f1: {reject: {A: DONE, B: DONE}}
          f2: {reject: {A: DONE, B: DONE}}
      second:
        initial: g0
        reject: {NEXT: DONE}
        states:
          g0: {on: {A: g1, B: g2}}
          g1: {reject: {A: DONE, B: DONE}}
          g2: {reject: {A: DONE, B: DONE}}
    """
    report = find_races(chart_of(text))
    # one race for the pair, about its undecided occurrence; the decided one is elsewhere
    (race,) = [r for r in report.races if r.events == ("A", "B")]
    assert (race.configuration, race.path, race.decided) == (("second.g0",), ("NEXT",), False)
    (other,) = race.elsewhere
    assert (other.configuration, other.path) == (("first.f0",), ())
    assert other.decision is not None and other.decision.name == "early"
    assert report.unmatched == ()


def test_the_most_specific_of_several_entries_decides_and_none_is_stale(tmp_path: Path) -> None:
    text = lesson(
        "races:\n"
        "  anywhere: {events: [TaskCompleted, CancellationRequested], decision: x}\n"
        "  here: {events: [CancellationRequested, TaskCompleted], in: running, decision: y}\n"
        "  again: {events: [TaskCompleted, CancellationRequested], decision: z}\n"
    )
    report = find_races(chart_of(text))
    assert [r.decision.name for r in report.races if r.decision] == ["here"]
    assert report.unmatched == ()
    assert findings(tmp_path, text, "stale-race-decision") == []


def test_the_search_stops_with_the_exploration_and_says_so() -> None:
    report = find_races(chart_of(lesson()), ExplorationOptions(max_configurations=1))
    assert not report.complete
    assert [limit.kind for limit in report.limits] == ["configurations"]


# -- generated charts: events of different regions always commute ------------------------


@st.composite
def _cycle_charts(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """A parallel chart of 2-4 regions, each a cycle of 2-3 states advanced by events it
    owns (its other events rejected), and the region of each event."""
    regions = draw(st.integers(min_value=2, max_value=4))
    lengths = [draw(st.integers(min_value=2, max_value=3)) for _ in range(regions)]
    owner = {f"E{r}_{i}": f"r{r}" for r in range(regions) for i in range(lengths[r])}
    lines = [
        "statechart: generated",
        "events: {" + ", ".join(f"{e}: {{}}" for e in owner) + "}",
        "parallel: true",
        "states:",
    ]
    for r, length in enumerate(lengths):
        rejects = ", ".join(f"E{r}_{i}: OUT_OF_TURN" for i in range(length))
        lines += [f"  r{r}:", "    initial: s0", f"    reject: {{{rejects}}}", "    states:"]
        for i in range(length):
            lines.append(f"      s{i}: {{on: {{E{r}_{i}: r{r}.s{(i + 1) % length}}}}}")
    return "\n".join(lines) + "\n", owner


@settings(max_examples=40, deadline=None)
@given(_cycle_charts())
def test_generated_regions_race_only_within_a_region(generated: tuple[str, dict[str, str]]) -> None:
    text, owner = generated
    report = find_races(chart_of(text))
    assert report.complete
    assert report.races, "two events of one cycle always race"
    for race in report.races:
        a, b = race.events
        assert owner[a] == owner[b], race
    by_region = "producers:\n" + "".join(
        f"  {region}: [{', '.join(e for e in owner if owner[e] == region)}]\n"
        for region in sorted(set(owner.values()))
    )
    assert find_races(chart_of(text + by_region)).races == ()


# -- the rules ----------------------------------------------------------------------------


def test_undecided_race_shows_both_orders_and_the_path(tmp_path: Path) -> None:
    producers = "producers: {worker: [TaskCompleted], user: [CancellationRequested]}"
    (finding,) = findings(tmp_path, lesson(producers), "undecided-race")
    assert finding.message == (
        "events 'TaskCompleted' (worker) and 'CancellationRequested' (user) race in "
        "{running}: the order they arrive in changes the outcome, and no `races:` entry "
        "decides it"
    )
    assert finding.notes[:4] == (
        "TaskCompleted then CancellationRequested: TaskCompleted APPLIED, then "
        "CancellationRequested REJECTED TERMINAL_STATE → {completed}",
        "  replay: TaskCompleted {}, CancellationRequested {}",
        "CancellationRequested then TaskCompleted: CancellationRequested APPLIED, then "
        "TaskCompleted REJECTED TERMINAL_STATE → {cancelled}",
        "  replay: CancellationRequested {}, TaskCompleted {}",
    )
    assert "path from the initial configuration:" in finding.notes
    assert (finding.span.line, finding.span.column) == (9, 22)  # the transition on TaskCompleted


def test_undecided_race_checks_only_charts_that_say_who_sends_what(tmp_path: Path) -> None:
    assert findings(tmp_path, lesson(), "undecided-race") == []
    decided = "races: {r: {events: [CancellationRequested, TaskCompleted], decision: First wins.}}"
    assert findings(tmp_path, lesson(decided), "undecided-race") == []
    assert findings(tmp_path, lesson(decided), "stale-race-decision") == []


def test_undecided_race_gives_one_finding_per_pair_with_a_count(tmp_path: Path) -> None:
    text = """
    statechart: twice
    events: {A: {}, B: {}, NEXT: {}}
    producers: {x: [A], y: [B], z: [NEXT]}
    races: {next_a: {events: [NEXT, A], decision: x}, next_b: {events: [NEXT, B], decision: x}}
    initial: s0
    states:
      s0: {on: {A: a, B: b, NEXT: t0}}
      t0: {on: {A: a, B: b}, reject: {NEXT: LATE}}
      a: {final: true}
      b: {final: true}
    """
    (finding,) = findings(tmp_path, text, "undecided-race")
    assert "they also race in 1 other configuration(s)" in finding.notes


STALE = {
    "an undeclared first event": (
        "races: {r: {events: [TaskFinished, CancellationRequested], decision: x}}",
        "race 'r' names the undeclared event 'TaskFinished'",
        (5, 22),
    ),
    "an undeclared second event": (
        "races: {r: {events: [TaskCompleted, Cancel], decision: x}}",
        "race 'r' names the undeclared event 'Cancel'",
        (5, 37),
    ),
    "an unknown state": (
        "races: {r: {events: [TaskCompleted, CancellationRequested], in: runing, decision: x}}",
        "race 'r': `in: runing` names no state of the chart that can be active",
        (5, 65),
    ),
    "a pair of one producer": (
        "producers: {w: [TaskCompleted, CancellationRequested]}\n"
        "races: {r: {events: [TaskCompleted, CancellationRequested], decision: x}}",
        "race 'r': 'TaskCompleted' and 'CancellationRequested' are both sent by producer 'w', "
        "which sends them in order, so they never race",
        (6, 9),
    ),
    "a state where the pair never races": (
        "races: {r: {events: [TaskCompleted, CancellationRequested], in: completed, decision: x}}",
        "race 'r': 'TaskCompleted' and 'CancellationRequested' are not order-sensitive in any "
        "reachable configuration where 'completed' is active: both orders give the same "
        "answers",
        (5, 9),
    ),
}


@pytest.mark.parametrize("case", sorted(STALE))
def test_stale_race_decision(tmp_path: Path, case: str) -> None:
    extra, message, (line, column) = STALE[case]
    (finding,) = findings(tmp_path, lesson(extra), "stale-race-decision")
    assert finding.message == message
    assert (finding.span.line, finding.span.column) == (line, column)


def test_a_commuting_pair_is_stale_only_when_the_exploration_is_complete(tmp_path: Path) -> None:
    text = REGIONS + "races: {r: {events: [A, B], decision: x}}\n"
    (finding,) = findings(tmp_path, text, "stale-race-decision")
    assert "are not order-sensitive in any reachable configuration:" in finding.message
    assert findings(tmp_path, text, "stale-race-decision", max_configurations=1) == []


def test_the_stale_rule_tries_every_hostile_entry(tmp_path: Path) -> None:
    """Each entry of a chart full of bad entries gives its own findings, nothing crashes."""
    entries = {
        f"r{i}": extra.split("races: {r: ", 1)[1].rsplit("}", 1)[0]
        for i, (extra, _m, _p) in enumerate(STALE.values())
        if extra.startswith("races:")
    }
    body = "races:\n" + "".join(f"  {name}: {spec}\n" for name, spec in entries.items())
    found = findings(tmp_path, lesson(body), "stale-race-decision")
    assert sorted({f.message.split("'")[1] for f in found}) == sorted(entries)

"""The analysis lint rules: no false positives on clean charts, and the tricky cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_charts import MACHINES, findings

from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_file


@pytest.mark.parametrize("name", ["task", "payment", "media_player"])
def test_reference_machines_have_no_analysis_finding(name: str) -> None:
    assert lint_file(MACHINES / f"{name}.yaml", LintConfig()) == []


CLEAN = sorted((Path(__file__).parent / "fixtures" / "clean").glob("*.yaml"))
GUARDED_BY_ACTIVE = (CLEAN[0].parent / "active-guard-prevents-violation.yaml").read_text()


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_clean_fixtures_have_no_finding_at_all(path: Path) -> None:
    assert lint_file(path, LintConfig()) == []


def test_without_the_guard_the_invariant_breaks_with_a_trace(tmp_path: Path) -> None:
    text = GUARDED_BY_ACTIVE.replace(
        """FINISH: {to: done, if: "active('artifact.uploaded')", else: NO_ARTIFACT}""",
        "FINISH: done",
    )
    (finding,) = findings(tmp_path, text, "invariant-violation")
    assert "{lifecycle.done, artifact.absent}" in finding.message
    assert finding.notes[:3] == (
        "path from the initial configuration:",
        "  start → {lifecycle.running, artifact.absent}",
        "  1. FINISH → {lifecycle.done, artifact.absent}",
    )


def test_findings_cite_the_data_guards_their_path_assumed(tmp_path: Path) -> None:
    (finding,) = findings(
        tmp_path,
        """
        statechart: assumed
        context: {n: integer}
        events: {GO: {k: integer}}
        initial: a
        states:
          a: {on: {GO: {to: b, if: "event.k > ctx.n", else: TOO_LOW}}}
          b: {already: [GO]}
          c: {final: true}
        """,
        "dead-state",
    )
    assert "     assuming condition (event.k > ctx.n) of GO from 'a' holds" in finding.notes


def test_undefined_pairs_are_grouped_under_the_smallest_state_of_the_owning_region(
    tmp_path: Path,
) -> None:
    found = findings(
        tmp_path,
        """
        statechart: grouped
        events: {A: {}, B: {}, X: {}}
        parallel: true
        states:
          p:
            initial: p1
            states:
              p1: {on: {A: p2, X: p1}}
              p2: {on: {A: p1}}
          q:
            initial: q1
            states:
              q1: {on: {B: q2}}
              q2: {on: {B: q1}}
        """,
        "undefined-pair",
    )
    assert [(d.message.split(":")[0], d.span.line) for d in found] == [
        ("event X is not classified under 'p.p2'", 9)
    ]
    assert (
        found[0]
        .notes[0]
        .startswith(
            "UNDEFINED_TRANSITION in 2 of the 2 reachable configurations with 'p.p2' active"
        )
    )
    assert "X belongs to the region 'p' (mentioned in 'p.p1')" in found[0].notes


def test_a_final_chart_is_classified_not_undefined(tmp_path: Path) -> None:
    assert not findings(
        tmp_path,
        """
        statechart: ends
        events: {GO: {}, LATE: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {LATE: TOO_EARLY}}
          b: {final: true}
        """,
        "undefined-pair",
    )


def test_events_nothing_mentions_are_left_to_unused_event(tmp_path: Path) -> None:
    text = """
        statechart: spare
        events: {GO: {}, SPARE: {}}
        initial: a
        states:
          a: {on: {GO: a}}
        """
    assert findings(tmp_path, text) == []


def test_an_event_classified_only_by_a_wildcard_elsewhere_is_still_an_undefined_pair(
    tmp_path: Path,
) -> None:
    found = findings(
        tmp_path,
        """
        statechart: wildcard
        events: {GO: {}, LATE: {}}
        initial: a
        states:
          a: {on: {GO: b}}
          b: {on: {GO: a}, reject: {"*": NOT_NOW}}
        """,
        "undefined-pair",
    )
    assert [(d.message.split(":")[0], d.span.line) for d in found] == [
        ("event LATE is not classified under 'a'", 5)
    ]


def test_a_self_transition_leaves_its_state(tmp_path: Path) -> None:
    text = """
        statechart: loop
        events: {TICK: {}, COUNT: {}}
        context: {n: integer}
        initial: a
        states:
          a: {on: {TICK: a, COUNT: {do: [{assign: {n: ctx.n + 1}}]}}}
          b: {on: {COUNT: {do: [{assign: {n: ctx.n + 1}}]}}}
        """
    assert findings(tmp_path, text, "dead-state") == []
    counting_only = text.replace("TICK: a, ", "").replace("events: {TICK: {}, ", "events: {")
    (dead,) = findings(tmp_path, counting_only, "dead-state")  # targetless: never leaves
    assert "'a'" in dead.message


def test_unreachable_state_is_reported_at_the_outermost_state(tmp_path: Path) -> None:
    (finding,) = findings(
        tmp_path,
        """
        statechart: nested
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: a}}
          island:
            initial: x
            states: {x: {on: {GO: y}}, y: {on: {GO: x}}}
        """,
        "unreachable-state",
    )
    assert "'island'" in finding.message
    assert "the 2 state(s) inside it are unreachable too" in finding.notes


def test_a_chart_whose_initial_macrostep_never_settles_reaches_no_state(
    tmp_path: Path,
) -> None:
    found = findings(
        tmp_path,
        """
        statechart: spin
        events: {GO: {}}
        initial: a
        states:
          a: {always: b, on: {GO: b}}
          b: {always: a}
        """,
    )
    assert [(d.slug, d.span.line) for d in found] == [("unreachable-state", 1)]
    assert "the initial macrostep never settles" in found[0].message
    assert "  start REJECTED LIVELOCK" in found[0].notes


def test_no_final_path_needs_a_chart_that_can_end(tmp_path: Path) -> None:
    text = """
        statechart: cycle
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: p}}
          p:
            initial: p1
            states: {p1: {on: {GO: p2}}, p2: {final: true}}
        """
    assert findings(tmp_path, text, "no-final-path") == []  # no top-level final state


def test_shadowing_by_weaker_guards(tmp_path: Path) -> None:
    (finding,) = findings(
        tmp_path,
        """
        statechart: weaker
        context: {n: integer, m: integer}
        events: {GO: {}}
        guards: {small: "ctx.n < 3", tiny: "ctx.m < 1"}
        initial: a
        states:
          a:
            on:
              GO:
                - {to: b, guard: small}
                - {to: c, guard: [small, tiny]}
                - {to: d}
          b: {}
          c: {}
          d: {}
        """,
        "shadowed-transition",
    )
    assert "has only guards that this one has too" in finding.message
    assert finding.span.line == 11


def test_expression_invariant_false_whatever_the_data(tmp_path: Path) -> None:
    (finding,) = findings(
        tmp_path,
        """
        statechart: exclusive
        events: {GO: {}}
        parallel: true
        states:
          a: {initial: a1, states: {a1: {on: {GO: a2}}, a2: {}}}
          b: {initial: b1, states: {b1: {on: {GO: b2}}, b2: {}}}
        invariants:
          not_both: {assert: "not (active('a.a2') and active('b.b2'))"}
        """,
        "invariant-violation",
    )
    assert "is false here whatever the data" in " ".join(finding.notes)


def test_the_configuration_bound_reports_analysis_limit_and_silences_absence_rules(
    tmp_path: Path,
) -> None:
    text = """
        statechart: grid
        events: {A: {}, B: {}}
        parallel: true
        states:
          x: {initial: x0, states: {x0: {on: {A: x1}}, x1: {on: {A: x0}}, x9: {}}}
          y: {initial: y0, states: {y0: {on: {B: y1}}, y1: {on: {B: y0}}}}
        """
    assert [d.slug for d in findings(tmp_path, text)] == ["unreachable-state"]
    found = findings(tmp_path, text, max_configurations=2)
    assert [d.slug for d in found] == ["analysis-limit"]
    assert "stopped at 2 abstract states" in found[0].message


def test_transitions_that_fire_only_in_a_livelock_are_never_selected(tmp_path: Path) -> None:
    found = findings(
        tmp_path,
        """
        statechart: loop
        events: {PING: {}, PONG: {}}
        initial: a
        states:
          a:
            on:
              PING: {do: [{raise: PONG}]}
              PONG: {do: [{raise: PING}]}
        """,
        "unreachable-transition",
    )
    assert len(found) == 2
    assert all("LIVELOCK" in d.notes[0] for d in found)

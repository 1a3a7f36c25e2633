"""invariant-violation points at the transition that breaks the invariant (a related location).

The table covers the ways a step can break a state-form invariant: entering a
`when` state, leaving a `require` state from another region, entering a
`forbid` state, an eventless transition later in the same macrostep, a
history transition; and the initial configuration, which no transition breaks.
Each row gives the source line of the expected transition(s).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from analysis_charts import findings

ROOT = Path(__file__).resolve().parents[2]

CASES = {
    "entering the when state": (
        """
        statechart: a
        events: {FINISH: {}, UPLOAD: {}}
        parallel: true
        states:
          lifecycle:
            initial: running
            states:
              running: {on: {FINISH: done}}
              done: {}
          artifact:
            initial: absent
            states: {absent: {on: {UPLOAD: uploaded}}, uploaded: {}}
        invariants:
          done_has_artifact: {when: lifecycle.done, require: artifact.uploaded}
        """,
        [8],
    ),
    "leaving the required state in another region": (
        """
        statechart: b
        events: {FINISH: {}, UPLOAD: {}, DELETE: {}}
        parallel: true
        states:
          lifecycle:
            initial: running
            states:
              running: {on: {FINISH: {to: done, if: "active('artifact.uploaded')"}}}
              done: {}
          artifact:
            initial: absent
            states:
              absent: {on: {UPLOAD: uploaded}}
              uploaded: {on: {DELETE: absent}}
        invariants:
          done_has_artifact: {when: lifecycle.done, require: artifact.uploaded}
        """,
        [14],
    ),
    "entering a forbidden state": (
        """
        statechart: c
        events: {OPEN: {}, ARM: {}}
        parallel: true
        states:
          door:
            initial: shut
            states: {shut: {on: {OPEN: open}}, open: {}}
          alarm:
            initial: off
            states: {off: {on: {ARM: armed}}, armed: {}}
        invariants:
          not_both: {when: door.open, forbid: alarm.armed}
        """,
        [10],
    ),
    "an eventless transition of the same step": (
        """
        statechart: d
        events: {GO: {}}
        parallel: true
        states:
          main:
            initial: a
            states:
              a: {on: {GO: b}}
              b: {always: c}
              c: {}
          flag:
            initial: down
            states: {down: {}, up: {}}
        invariants:
          c_needs_up: {when: main.c, require: flag.up}
        """,
        [9],
    ),
    "the initial configuration": (
        """
        statechart: e
        events: {GO: {}}
        parallel: true
        states:
          main: {initial: a, states: {a: {on: {GO: a}}}}
          flag: {initial: down, states: {down: {}, up: {}}}
        invariants:
          a_needs_up: {when: main.a, require: flag.up}
        """,
        [],
    ),
}


@pytest.mark.parametrize(("text", "lines"), CASES.values(), ids=list(CASES))
def test_the_breaking_transition_is_a_related_location(
    tmp_path: Path, text: str, lines: list[int]
) -> None:
    found = findings(tmp_path, text, "invariant-violation")
    assert found, "the invariant is not broken"
    finding = found[0]
    assert [r.span.line for r in finding.related] == lines
    assert all("breaks invariant" in r.message for r in finding.related)
    assert all(r.span.file == finding.span.file for r in finding.related)
    culprit = [n for n in finding.notes if n.startswith("broken by ")]
    assert len(culprit) == 1
    if lines:
        assert all(f"(line {r.span.line})" in culprit[0] for r in finding.related)
    else:
        assert culprit == ["broken by the initial configuration"]


def test_the_history_fixture_points_at_the_back_transition(tmp_path: Path) -> None:
    text = (ROOT / "tests/lint/fixtures/rules/invariant-violation.yaml").read_text("utf-8")
    (finding,) = findings(tmp_path, textwrap.dedent(text), "invariant-violation")
    assert [r.span.line for r in finding.related] == [22]
    assert "broken by 'wizard.away' --BACK--> 'wizard.steps.memory' (line 22)" in finding.notes

"""The static classification table: candidates, already, most specific reject, terminal."""

from __future__ import annotations

from chart_helpers import chart_of

from statekit.compiler.ir import CompiledChart
from statekit.diagrams.classify import Cell, Fallback, classify, classify_cell

CHART = """
    statechart: c
    context:
      n: {type: integer, default: 0}
    events: {A: {}, B: {}, C: {}, D: {}, E: {}}
    guards:
      g: {if: ctx.n > 0, else: NOT_POSITIVE}
    initial: outer
    states:
      outer:
        initial: inner
        on:
          E: end
        reject:
          B: OUTER_B
          "*": OUTER_ANY
        already: [D]
        states:
          inner:
            on:
              A: [{to: other, guard: g}, {to: other2}]
              C: {to: other, guard: g}
            reject:
              "*": INNER_ANY
          other:
            reject:
              B: OTHER_B
          other2: {}
      end:
        final: true
        already: [E]
"""


def cell(chart: CompiledChart, path: str, event: str) -> Cell:
    return classify_cell(chart, chart.state(path), event)


def test_candidates_up_to_the_first_unguarded_one() -> None:
    chart = chart_of(CHART)
    c = cell(chart, "outer.inner", "A")
    assert c.fallback is Fallback.NONE
    assert [chart.transitions[t].targets for t in c.transitions] == [
        (chart.path_index["outer.other"],),
        (chart.path_index["outer.other2"],),
    ]


def test_guarded_only_falls_back_to_the_guard_reason_or_already() -> None:
    chart = chart_of(CHART)
    assert cell(chart, "outer.inner", "C").fallback is Fallback.GUARD
    # ancestors' transitions are candidates too
    e = cell(chart, "outer.inner", "E")
    assert e.fallback is Fallback.NONE and chart.transitions[e.transitions[0]].source == 1


def test_already_before_reject() -> None:
    chart = chart_of(CHART)
    d = cell(chart, "outer.inner", "D")
    assert (d.fallback, d.by) == (Fallback.ALREADY, chart.path_index["outer"])


def test_most_specific_reject_deepest_first_exact_before_wildcard() -> None:
    chart = chart_of(CHART)
    # the deepest state's "*" wins over an ancestor's exact entry
    assert cell(chart, "outer.inner", "B").reason == "INNER_ANY"
    # an exact entry of the deepest state
    assert cell(chart, "outer.other", "B").reason == "OTHER_B"
    # nothing on the state itself: the ancestor's exact entry, then its "*"
    assert cell(chart, "outer.other2", "B").reason == "OUTER_B"
    assert cell(chart, "outer.other2", "C").reason == "OUTER_ANY"


def test_top_level_final_state_is_terminal() -> None:
    chart = chart_of(CHART)
    assert cell(chart, "end", "E").fallback is Fallback.ALREADY
    a = cell(chart, "end", "A")
    assert (a.fallback, a.reason) == (Fallback.TERMINAL, "TERMINAL_STATE")


def test_undefined_and_table_shape() -> None:
    chart = chart_of(
        """
        statechart: u
        events: {GO: {}, NOPE: {}}
        initial: a
        states:
          a: {on: {GO: b}}
          b: {}
        """
    )
    table = classify(chart)
    assert [(c.state, c.event) for c in table] == [(1, "GO"), (1, "NOPE"), (2, "GO"), (2, "NOPE")]
    assert table[1].fallback is Fallback.UNDEFINED
    assert table[1].reason == "UNDEFINED_TRANSITION"

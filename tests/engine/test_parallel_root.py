"""A transition whose domain is a parallel root re-enters the regions it does not target."""

from __future__ import annotations

from chart_helpers import machine

from statekit.engine.result import Status


def test_untargeted_regions_of_a_parallel_root_restart_at_their_initial_state() -> None:
    chart = machine("""
        statechart: regions
        events: {GO: {}, MOVE: {}}
        parallel: true
        states:
          p:
            initial: p1
            states: {p1: {on: {MOVE: p2}}, p2: {on: {GO: q.q2}}}
          q:
            initial: q1
            states: {q1: {}, q2: {}}
        """)
    moved = chart.send(chart.start(), "MOVE").state
    result = chart.send(moved, "GO")
    assert result.status is Status.APPLIED
    assert result.state.configuration == {"p", "p.p1", "q", "q.q2"}

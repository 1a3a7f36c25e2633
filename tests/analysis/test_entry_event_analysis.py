"""The analysis reads `_event` where entry and exit actions and eventless transitions read
it: what the event is is known in every run (null at the start, the last event the
macrostep took up on an eventless transition), so a condition on it alone is decided
exactly; a context field assigned from it is an unknown string, both ways afterwards."""

from __future__ import annotations

from pathlib import Path

from analysis_charts import chart_of, explored, findings

from statekit.analysis.facts import reached_states

ROUTED = """
statechart: routed
events: {GO: {}, STOP: {}}
initial: hub
states:
  hub:
    always:
      - {to: fresh, if: "_event.name is None"}
      - {to: went, if: "_event.name == 'GO' and _event.type == 'external'"}
      - {to: stopped}
  fresh:
    on: {GO: hub, STOP: hub}
  went:
    on: {GO: hub, STOP: hub}
  stopped: {final: true}
"""


def test_an_eventless_condition_on_the_bound_event_is_decided_exactly() -> None:
    exploration = explored(ROUTED)
    chart = chart_of(ROUTED)
    assert not any(branch.assumptions for n in exploration.nodes for branch in n.outcomes or ())
    reached = {chart.states[s].path for s in reached_states(exploration)}
    assert reached == {"hub", "fresh", "went", "stopped"}
    # `fresh` only at the start (node 0): after an event `_event.name is None` is false
    targets = {branch.target for n in exploration.nodes for branch in n.outcomes or ()}
    assert 0 not in targets and len(targets - {-1}) == 2  # went, stopped (NOWHERE: final)


AUDITED = """
statechart: audited
context:
  closed_by: {type: string, nullable: true}
events: {RESOLVE: {}, CANCEL: {}, REOPEN: {}, ARCHIVE: {}}
initial: open
states:
  open:
    on: {RESOLVE: closed, CANCEL: closed}
    reject: {REOPEN: OPEN, ARCHIVE: OPEN}
  closed:
    entry: [{assign: {closed_by: _event.name}}]
    on:
      REOPEN: {to: open, if: "ctx.closed_by == 'CANCEL'"}
      ARCHIVE: {to: archived, if: "ctx.closed_by == 'RESOLVE'", else: NOT_RESOLVED}
    reject: {RESOLVE: CLOSED, CANCEL: CLOSED}
  archived: {final: true}
"""


def test_a_field_assigned_from_the_event_is_unknown_never_a_false_unreachable(
    tmp_path: Path,
) -> None:
    reached = {chart_of(AUDITED).states[s].path for s in reached_states(explored(AUDITED))}
    assert reached == {"open", "closed", "archived"}
    for slug in ("unreachable-state", "unreachable-transition"):
        assert findings(tmp_path, AUDITED, slug) == []

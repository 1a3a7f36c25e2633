"""`pause:` and `resume:` in diagrams, drawn where a `cancel:` is: in a state's box
(`entry / pause sla`, `exit / resume sla`) and after a transition's trigger
(`WAIT / pause sla`), and in the model's effect texts."""

from __future__ import annotations

from chart_helpers import chart_of

from statekit.diagrams.dot import to_dot
from statekit.diagrams.model import extract
from statekit.diagrams.views import whole_view

CHART = """
    statechart: ticket
    events: {WAIT: {}, BACK: {}, HOLD: {}}
    initial: open
    states:
      open:
        after: [{id: sla, delay: 10s, to: breached}]
        initial: working
        states:
          working: {on: {WAIT: {to: waiting, do: [{pause: sla}]}}}
          waiting:
            on: {BACK: {to: working, do: [{resume: sla}]}, HOLD: held}
          held:
            entry: [{pause: sla}]
            exit: [{resume: sla}]
            on: {BACK: working}
      breached: {final: true}
"""


def test_pause_and_resume_are_drawn_in_state_boxes_and_on_edges() -> None:
    dot = to_dot(whole_view(extract(chart_of(CHART))))
    row = '</TD></TR><TR><TD ALIGN="LEFT">'  # one table row per line
    assert f"entry / pause sla{row}exit / resume sla" in dot
    assert f"<B>WAIT</B>{row}/ pause sla" in dot
    assert f"<B>BACK</B>{row}/ resume sla" in dot


def test_the_model_gives_each_its_own_text() -> None:
    diagram = extract(chart_of(CHART))
    texts = {
        (t.trigger, tuple(e.short for e in t.effects)) for t in diagram.transitions if t.effects
    }
    assert texts == {("WAIT", ("pause sla",)), ("BACK", ("resume sla",))}

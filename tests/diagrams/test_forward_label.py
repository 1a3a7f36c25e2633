"""An invoke with `forward: true` says so on its box: DOT and Mermaid."""

from __future__ import annotations

from statekit.compiler.pipeline import compile_source
from statekit.diagrams.dot import to_dot
from statekit.diagrams.mermaid import to_mermaid
from statekit.diagrams.model import EffectDetail, extract
from statekit.diagrams.views import Split, plan_views

CHART = """\
statechart: desk
events: {note: {}}
initial: open
states:
  open:
    invoke:
      - {id: clerk, chart: clerk, forward: true}
      - {id: archive, chart: archive}
    on: {note: {}}
"""


def test_the_forwarding_invoke_is_marked_and_the_other_is_not() -> None:
    chart = compile_source(CHART, "desk.yaml").chart
    assert chart is not None
    (view,) = plan_views(extract(chart), Split.AUTO, EffectDetail.SHORT, 40)
    mermaid = to_mermaid(view)
    assert "invoke clerk → clerk (forward)" in mermaid
    assert "invoke archive → archive" in mermaid and "archive (forward)" not in mermaid
    dot = to_dot(view)
    assert "chart clerk (forward)" in dot and "chart archive (forward)" not in dot

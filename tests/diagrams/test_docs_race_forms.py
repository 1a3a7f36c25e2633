"""The docs page's producers and race decisions sections show the grouped forms: an
unordered producer with its decision, race sides that are lists or `*`, and ordering
facts as "A before B"."""

from __future__ import annotations

import textwrap

from statekit.compiler.pipeline import compile_source
from statekit.diagrams.policies import policy_sections

CHART = """
statechart: shipment
version: 1
events: {PLACED: {}, PICKED_UP: {}, DELIVERED: {}, CANCEL: {}}
producers:
  shop: [PLACED]
  carrier: {events: [PICKED_UP, DELIVERED], unordered: true, decision: made idempotent}
races:
  cancel_vs_carrier: {events: [CANCEL, [PICKED_UP, DELIVERED]], decision: cancel wins}
  placed_first: {precedes: [PLACED, "*"], decision: nothing comes first}
initial: waiting
states:
  waiting:
    on: {PLACED: waiting, PICKED_UP: done, DELIVERED: done, CANCEL: done}
  done: {final: true, reject: {"*": DONE}}
"""


def test_the_page_shows_each_form_as_written() -> None:
    chart = compile_source(textwrap.dedent(CHART).lstrip("\n"), "chart.yaml").chart
    assert chart is not None
    lines = policy_sections(chart)
    assert "| `shop` | `PLACED` |" in lines
    assert "| `carrier` | `PICKED_UP`, `DELIVERED` (in any order: made idempotent) |" in lines
    assert (
        "| `cancel_vs_carrier` | `CANCEL` · `[PICKED_UP, DELIVERED]` | everywhere | cancel wins |"
        in lines
    )
    assert "| `placed_first` | `PLACED` before `*` | everywhere | nothing comes first |" in lines

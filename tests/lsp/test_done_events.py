"""`done.state.<path>` in the language server, over its wire protocol: a chart that
handles a state's done event in another state's `on:` compiles clean; completion of an
`on:` key offers the done events of the compound and parallel states, and `event.` in
such a transition the fields of the final children's `output:`; hover on a state lists
its `on:` entry on another state's done event (not its own `done:`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_session import Editor, Json

CHART = """\
statechart: fulfilment
context:
  paid: {type: integer, default: 0}
events:
  PAY: {amount: integer}
  SHIP: {}
initial: work
states:
  work:
    parallel: true
    on:
      done.state.work.payment: {do: [{assign: {paid: event.amount}}]}
    done: delivered
    states:
      payment:
        initial: unpaid
        states:
          unpaid: {on: {PAY: paid}}
          paid: {final: true, output: {amount: "7"}, already: [PAY]}
      shipping:
        initial: packing
        states:
          packing: {on: {SHIP: shipped}}
          shipped: {final: true, already: [SHIP]}
  delivered: {final: true}
"""


def _find(text: str, marker: str, offset: int | None = None) -> Json:
    index = text.index(marker) + (len(marker) if offset is None else offset)
    return {"line": text.count("\n", 0, index), "character": index - text.rfind("\n", 0, index) - 1}


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("done_events"))
    yield session
    session.close()


@pytest.fixture
def uri(editor: Editor, tmp_path: Path) -> Iterator[str]:
    opened = editor.open(tmp_path / "fulfilment.yaml", CHART)
    assert editor.published(opened, 1) == []  # the chart compiles clean
    yield opened
    editor.close_document(opened)
    editor.published(opened)


def test_an_on_key_completes_to_the_done_events_of_compound_and_parallel_states(
    editor: Editor, uri: str
) -> None:
    position = _find(CHART, "    on:\n      do")  # typed `do`: the declared ones would not match
    found = editor.request("textDocument/completion", uri, position=position)
    labels = [item["label"] for item in found["items"]]
    assert [label for label in labels if label.startswith("done.state.")] == [
        "done.state.work",
        "done.state.work.payment",
        "done.state.work.shipping",
    ]
    before = editor.request("textDocument/completion", uri, position=_find(CHART, "{PAY: paid}", 1))
    assert [item["label"] for item in before["items"]] == ["PAY", "SHIP"]  # nothing typed yet


def test_event_in_a_done_transition_completes_to_the_output_fields(
    editor: Editor, uri: str
) -> None:
    found = editor.request("textDocument/completion", uri, position=_find(CHART, "paid: event."))
    items = [(item["label"], item.get("detail", "")) for item in found["items"]]
    assert items == [("amount", "integer (output in done.state.work.payment)")]


def test_hover_on_a_state_lists_its_transition_on_a_done_event(editor: Editor, uri: str) -> None:
    hovered = editor.request("textDocument/hover", uri, position=_find(CHART, "  work:", 3))
    value = hovered["contents"]["value"]
    assert "transitions on: done.state.work.payment" in value.replace("\\", "")

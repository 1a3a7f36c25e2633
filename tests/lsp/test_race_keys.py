"""The language server in `producers:` and `races:` entries of every form: unordered
producer mappings, race sides that are lists or `"*"`, and ordering facts (`precedes`)."""

from __future__ import annotations

from statekit.compiler.pipeline import compile_source
from statekit.lsp.index import Role
from statekit.lsp.navigation import chart_document, completions, hover, references, rename
from statekit.lsp.records import Position, TextEdit

CHART = """\
statechart: shipment
events: {PLACED: {}, PICKED_UP: {}, DELIVERED: {}, CANCEL: {}}
producers:
  shop: [PLACED]
  carrier: {events: [PICKED_UP, DELIVERED], unordered: true, decision: made idempotent}
  customer:
    events: [CANCEL]
races:
  cancel_vs_carrier: {events: [CANCEL, [PICKED_UP, DELIVERED]], decision: cancel wins}
  cancel_vs_any: {events: ["*", CANCEL], in: waiting, decision: cancel wins}
  placed_first: {precedes: [PLACED, "*"], decision: nothing comes before the order}
initial: waiting
states:
  waiting:
    on: {PLACED: waiting, PICKED_UP: done, DELIVERED: done, CANCEL: done}
  done: {final: true, reject: {"*": DONE}}
"""


def at(text: str, marker: str, offset: int | None = None) -> Position:
    index = text.index(marker) + (len(marker) if offset is None else offset)
    line = text.count("\n", 0, index)
    return Position(line, index - (text.rfind("\n", 0, index) + 1))


def test_the_chart_compiles() -> None:
    assert compile_source(CHART, "chart.yaml").chart is not None


def test_every_event_named_in_every_form_is_a_reference() -> None:
    doc = chart_document(CHART)
    refs = [(r.text, r.role) for r in doc.index.references if r.role.value.startswith(("p", "r"))]
    producers = [text for text, role in refs if role is Role.PRODUCER]
    assert producers == ["PLACED", "PICKED_UP", "DELIVERED", "CANCEL"]
    sides = [text for text, role in refs if role is Role.RACE_EVENTS]
    assert sides == ["CANCEL", "PICKED_UP", "DELIVERED", "CANCEL"]
    assert [text for text, role in refs if role is Role.PRECEDES] == ["PLACED"]
    assert all(r.key is not None for r in doc.index.references)


def test_references_and_hover_reach_lists_and_ordering_facts() -> None:
    doc = chart_document(CHART)
    uses = references(doc, at(CHART, "[PICKED_UP, DELIVERED]]", offset=3))
    lines = sorted(r.start.line for r in uses)
    assert lines == [1, 4, 8, 14]  # declaration, producer, race list, transition
    shown = hover(doc, at(CHART, "precedes: [PLACED", offset=13))
    assert shown is not None and "**event** `PLACED`" in shown.markdown


def labels(text: str, marker: str) -> list[str]:
    return [item.label for item in completions(chart_document(text), at(text, marker))]


def test_completion_offers_events_and_any_event_where_a_side_is_typed() -> None:
    events = ["PLACED", "PICKED_UP", "DELIVERED", "CANCEL"]
    assert labels(CHART, "events: [CANCEL, ") == [*events, '"*"']
    assert labels(CHART, "precedes: [") == [*events, '"*"']
    assert labels(CHART, "events: [CANCEL, [PICKED_UP, ") == events  # no "*" inside a list
    assert labels(CHART, "carrier: {events: [") == events
    assert labels(CHART, "  shop: [") == events
    assert labels(CHART, "    events: [") == events


def test_a_rename_reaches_lists_producer_mappings_and_ordering_facts() -> None:
    doc = chart_document(CHART)
    for old, place, offset in (
        ("PICKED_UP", "[PICKED_UP, DELIVERED]]", 3),  # in a race's list
        ("PLACED", "precedes: [PLACED", 12),  # in an ordering fact
        ("CANCEL", "    events: [CANCEL]", 15),  # in a producer mapping
    ):
        position = at(CHART, place, offset=offset)
        outcome = rename(doc, position, f"{old}_V2")
        assert outcome.refusal is None
        renamed = apply(CHART, outcome.edits)
        assert old not in renamed.replace(f"{old}_V2", "")
        assert compile_source(renamed, "chart.yaml").chart is not None


def apply(text: str, edits: tuple[TextEdit, ...]) -> str:
    """The text with non-overlapping single-line edits applied."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: e.range.start, reverse=True):
        line = lines[edit.range.start.line]
        start, end = edit.range.start.character, edit.range.end.character
        lines[edit.range.start.line] = line[:start] + edit.new_text + line[end:]
    return "\n".join(lines)

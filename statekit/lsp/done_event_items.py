"""Completion of `done.state.<path>` under a state's `on:`: the done event of every
compound or parallel state (statekit.compiler.model.done_events), and of its payload's
fields (its final children's `output:`) after `event.` in such a transition."""

from __future__ import annotations

from statekit.compiler.ir import StateKind
from statekit.compiler.model.done_events import DONE_STATE, is_done_event
from statekit.lsp.completion_items import item
from statekit.lsp.document import ChartDocument
from statekit.lsp.index import Index
from statekit.lsp.records import CompletionItem, CompletionKind, Range


def done_event_items(index: Index, rng: Range) -> list[CompletionItem]:
    """`done.state.<path>` of each state with child states, in document order."""
    return [
        item(
            DONE_STATE + path,
            CompletionKind.EVENT,
            "done event: the state reached a final child (every region, for a parallel state)",
            rng,
        )
        for path, info in index.states.items()
        if path and info.children and not info.history
    ]


def done_payload_items(doc: ChartDocument, events: list[str], rng: Range) -> list[CompletionItem]:
    """The payload fields of the done events among `events` (none until the chart
    compiles, or when the state's final children give no `output:`)."""
    chart = doc.chart
    if chart is None:
        return []
    items: dict[str, CompletionItem] = {}
    for event in filter(is_done_event, events):
        state = chart.path_index.get(event.removeprefix(DONE_STATE))
        children = () if state is None else chart.states[state].children
        for child in children:
            if chart.states[child].kind is StateKind.FINAL:
                for name, expression in chart.states[child].output:
                    detail = f"{expression.type.describe()} (output in {event})"
                    items.setdefault(name, item(name, CompletionKind.FIELD, detail, rng))
    return list(items.values())

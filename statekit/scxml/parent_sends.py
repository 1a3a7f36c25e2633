"""A child's `<send target="#_parent">` with data: the parent declares the event's fields.

The events a parent receives from an invoked document are events of the parent's chart,
so their payload fields are declared there, typed from the values the child sends. The
child's values are typed without its context (the parent's translation does not know
the child's `<data>`), so only constants are sent with data to the parent: a `<param>`
whose value reads the child's data is refused (`constant_payload`).
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, TypedEvent
from statekit.scxml.document import Element

PARENT_TARGET = "#_parent"


def sends_to_parent(invoke: Element) -> Iterator[tuple[str, Element]]:
    """Each `<send target="#_parent" event=...>` with data in the document `invoke`
    holds inline (not in the documents it invokes in turn), as (event, element)."""
    for content in invoke.kids("content"):
        for document in content.kids("scxml"):
            yield from _sends(document)


def _sends(element: Element) -> Iterator[tuple[str, Element]]:
    for child in element.children:
        if child.tag == "invoke":
            continue  # a grandchild's `#_parent` is its own parent
        if (
            child.tag == "send"
            and child.attrs.get("target") == PARENT_TARGET
            and "event" in child.attrs
            and (child.kids("param", "content") or "namelist" in child.attrs)
        ):
            yield child.attrs["event"], child
        if child.tag not in ("content", "donedata"):
            yield from _sends(child)


def constant_payload(payload: dict[str, str], path: str, element: Element) -> bool:
    """Whether every value of a `send`'s payload (statekit expressions) reads nothing:
    its type is then the same in the parent, which declares it."""
    scope = ExpressionScope(context={}, event=TypedEvent({}), resolve_state=lambda _r, _s: 0)
    span = SourceSpan(path, element.line, element.column, element.line, element.column + 1)
    return all(isinstance(compile_expression(v, span, scope), Expression) for v in payload.values())

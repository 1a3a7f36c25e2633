"""`<donedata>` of a `<final>`: statekit's `output:` on that final state.

Entering a final state raises `done.state.<parent>` with its `output:` fields, which
the parent's `done:` transitions read as `event.<field>` (docs/dsl.md, "Final states
and their output"). A `<param name expr>` or `<param name location>` is a field; a
`<content>` is the one field `content`, as a `<send>`'s is (`_event.data` as a whole
reads it). A `<param>` that fails whenever it is evaluated (a location no `<data>`
declares, an expression that is a statement such as `return`) is SCXML's
`error.execution` with an empty payload: the final state's entry raises
`error.execution` (after its `<onentry>`, the order SCXML evaluates the donedata in)
and the done event raised after it has empty data: the output `{content: null}`, read
by `_event.data` as a whole as null (`_event.data is None`), as SCXML's empty data is.
"""

from __future__ import annotations

from typing import Any

from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION
from statekit.scxml.context import ImportContext, quoted
from statekit.scxml.document import Element
from statekit.scxml.effects import not_an_expression
from statekit.scxml.expressions import CONTENT_FIELD
from statekit.scxml.payloads import content_payload

_STATEMENTS = frozenset(
    [
        "return",
        "pass",
        "break",
        "continue",
        "del",
        "import",
        "raise",
        "global",
        "nonlocal",
        "assert",
        "def",
        "class",
    ]
)
"""Python keywords that begin a statement, never an expression."""
_EMPTY_DATA = {CONTENT_FIELD: "null"}
"""The output of a `<donedata>` that always fails: SCXML's done event then has empty
data, which `_event.data` as a whole (the field `content`) reads as null."""


def final_output(final: Element, c: ImportContext) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The `output:` of `final` (field → statekit expression) and the entry effects its
    `<donedata>` adds (a `raise: error.execution` when it always fails)."""
    blocks = final.kids("donedata")
    if not blocks:
        return {}, []
    donedata = blocks[0]
    contents = donedata.kids("content")
    if contents:
        if donedata.kids("param"):
            raise c.refuse(donedata, "<donedata> with <content> and <param> (an error)")
        failure = _failure(contents[0], c)
        if failure is None:
            return content_payload(contents[0], c.translated, c.refuse), []
        return dict(_EMPTY_DATA), [_raised(failure)]
    output: dict[str, str] = {}
    for param in donedata.kids("param"):
        failure = _failure(param, c)
        if failure is not None:  # SCXML: error.execution, and the event carries nothing
            c.note(param, f"{failure}: error.execution is raised and the done event is empty")
            return dict(_EMPTY_DATA), [_raised(failure)]
        name = param.attrs.get("name", "")
        if "expr" in param.attrs:
            output[name] = c.expression(param, "expr")
        else:
            output[name] = f"ctx.{param.attrs['location'].strip()}"
    return output, []


def _failure(element: Element, c: ImportContext) -> str | None:
    """Why this `<param>` or `<content>` fails whenever it is evaluated; None when it may
    not."""
    if "expr" in element.attrs:
        text = element.attrs["expr"].strip()
        if text.split(" ", 1)[0] in _STATEMENTS or not_an_expression(text):
            return f"<{element.tag} expr={text}>: not an expression"
        return None
    if element.tag == "param":
        location = element.attrs.get("location", "").strip()
        if location not in c.data_names():
            return f"<param location={location}>: no <data> declares it"
    return None


def _raised(failure: str) -> dict[str, Any]:
    return {"raise": {"event": ERROR_EXECUTION, "payload": {"reason": quoted(failure)}}}

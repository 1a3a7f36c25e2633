"""`<foreach>` where SCXML raises `error.execution` for certain.

A `<foreach>` whose `item` or `index` is no variable name, or whose `array` is a
`<data>` declared with a type that is no list, fails whenever it runs: SCXML raises
`error.execution` and runs nothing more of its block (`foreach_failure` says why,
and the block is written as that raise).

A `<foreach>` whose body holds, at its top level, an element that always fails (an
`<assign>` to an undeclared location) runs its body for the first item only, up to
that element, then raises `error.execution` and stops the block around the loop;
over an empty array nothing fails and the block goes on. `first_item_then_failure`
writes exactly that: `if len(array) > 0` the first item's assignments, the body
before the failing element and the raise, `else` the rest of the block.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION
from statekit.compiler.value_types import BaseType
from statekit.scxml.context import ImportContext, quoted
from statekit.scxml.document import Element

Effects = Callable[[Element, ImportContext, "str | None"], list[dict[str, Any]]]
Failure = Callable[[Element, ImportContext], "str | None"]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def foreach_failure(element: Element, c: ImportContext) -> str | None:
    """Why this `<foreach>` fails whenever it runs, or None."""
    for key in ("item", "index"):
        name = element.attrs.get(key)
        if name is not None and not _NAME.match(name.strip()):
            return f"<foreach {key}={name}>: not a variable name"
    array = element.attrs.get("array", "").strip()
    data = c.fields.get(array)
    if data is not None and data.type.base is not BaseType.LIST:
        return f"<foreach array={array}>: {data.type.describe()}, not an array"
    return None


def raise_error(reason: str) -> dict[str, Any]:
    """The effect SCXML's failing element amounts to."""
    return {"raise": {"event": ERROR_EXECUTION, "payload": {"reason": quoted(reason)}}}


def first_item_then_failure(
    element: Element,
    rest: list[Element],
    c: ImportContext,
    content_of: Effects,
    certain_failure: Failure,
) -> dict[str, Any] | None:
    """The effect of a `<foreach>` (followed in its block by `rest`) whose body has an
    element that always fails at its top level; None when it has none."""
    body = element.children
    found = [(i, f) for i, kid in enumerate(body) if (f := certain_failure(kid, c)) is not None]
    if not found:
        return None
    at, failure = found[0]
    array = c.expression(element, "array")
    first = {element.attrs["item"].strip(): f"({array})[0]"}
    if "index" in element.attrs:
        first[element.attrs["index"].strip()] = "0"
    for dropped in body[at + 1 :]:
        c.note(dropped, f"<{dropped.tag}> dropped: the <{body[at].tag}> before it fails")
    before = content_of(Element("block", {}, 0, 0, children=body[:at]), c, "foreach")
    branch: dict[str, Any] = {
        "cond": f"len({array}) > 0",
        "then": [{"assign": first}, *before, raise_error(failure)],
    }
    after = content_of(Element("block", {}, 0, 0, children=rest), c, None)
    if after:
        branch["else"] = after
    return {"if": branch}
